// Package iosys is the operating-system glue between the RuntimeBus's I/O
// intrinsics and a completion backend: it chooses the backend for the OS
// it is built for, opens one per worker, and creates the sockets the
// backends then drive. On Linux the backend is io_uring with the epoll
// fallback (package uring; JADE_POLLER selects); on darwin and freebsd it
// is kqueue (compiled and vetted by CI, never executed), on windows IOCP
// (executed under Wine by `make windows`, see docs/PLATFORMS.md);
// elsewhere Open reports that this build has no backend.
package iosys

// The halves of a connection that Shutdown stops.
const (
	ShutRead  = 0 // no more reads; unread and later input is discarded
	ShutWrite = 1 // no more writes: the peer reads end of stream after the data sent
	ShutBoth  = 2
)
