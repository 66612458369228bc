// Package iosys is the operating-system glue between the RuntimeBus's I/O
// intrinsics and a completion backend: it opens one backend per worker and
// creates the sockets the backends then drive. On Linux the backend is
// io_uring with the epoll fallback (package uring; JADE_POLLER selects);
// elsewhere Open reports that this build has no backend wired in (the
// kqueue and IOCP backends are compiled and vetted but not yet wired, see
// the README).
package iosys
