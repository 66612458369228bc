// Package iosys is the operating-system glue between the RuntimeBus's I/O
// intrinsics and a completion backend: it chooses the backend for the OS
// it is built for and opens one per worker, and it makes the sockets the
// backends then drive. On Linux the backend is io_uring with the epoll
// fallback (package uring; JADE_POLLER selects); on darwin and freebsd it
// is kqueue (compiled and vetted by CI, never executed), on windows IOCP
// (executed under Wine by `make windows`, see docs/PLATFORMS.md);
// elsewhere Open reports that this build has no backend.
//
// # One file per OS
//
// The package has the shape of a cross-platform syscall package: the
// portable API (Socket, Listen, ListenWith, ParseAddr) in iosys.go, and
// one file per OS for what the kernels do differently: iosys_linux.go,
// iosys_bsd.go, iosys_windows.go and iosys_other.go open the backend;
// sock_unix.go (linux, darwin, freebsd) and sock_windows.go make and
// inspect sockets (Accepted, Shutdown, LocalAddr, PeerAddr, Close);
// sock_linux.go and sock_bsd.go take a waiting connection or send what
// fits without submitting anything (AcceptNow, SendNow); sock_other.go
// reports that a build has no sockets. The raw per-OS primitives that a
// backend's own ops need as well (a non-blocking accept on macOS, the
// sockaddr conversions, Winsock start-up) are in evpoll/unixsock and
// evpoll/winsock. A backend package (uring, kqueue, iocp) makes no socket:
// it only submits ops and completes them.
//
// # Who owns a descriptor
//
// This is the one statement of the rule; package sched (fd.go) keeps it
// and says how.
//
//   - Who opens. A descriptor comes into being in one of two places:
//     iosys (Socket, Listen, ListenWith, AcceptNow) or a backend op that
//     makes one (Accept, Open: the backend returns the number in the
//     completion). The bus wraps every number it receives at once in a
//     sched.FD (Control.NewFD), owned by the requesting task, or by no
//     task while a connect is in flight or a drain holds a queued
//     connection: from then on the FD, not the number, is what is passed
//     around.
//   - Who may use it. Only the task that owns the FD (FD.OwnedBy; one
//     owner at a time, moved with PassFD when a handle is passed to a
//     spawned child), and only through the scheduler: every op naming the
//     descriptor is submitted with its FD (SubmitIO), which holds a
//     reference until the op's final completion; a direct call on the
//     number (Shutdown, LocalAddr, SendNow) goes through Control.UseFD,
//     which refuses a closing FD. A backend uses a number only while an
//     op naming it is in flight, and keeps per-descriptor state (epoll,
//     kqueue) only until it is told to forget it.
//   - Who closes. The scheduler, and only it, exactly once: CloseFD (a
//     task's close, the end of its owner, a failed connect) marks the FD
//     closing, cancels the ops in flight, and closes the number when the
//     last reference drops: every worker's backend forgets it first, then
//     a Close op on a backend or [Close] here (sched.Config.CloseFD). iosys closes a
//     number itself only in the error path of the call that made it,
//     before anyone saw it. A backend closes only what it made for a
//     completion nobody received (an accepted connection or opened file
//     whose completion its Close discarded).
package iosys
