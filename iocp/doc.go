// Package iocp is the completion backend of the Jade scheduler for
// Windows: the [github.com/jadevm/jade/internal/evpoll.Backend] contract on an I/O
// completion port. Unlike epoll and kqueue, IOCP is itself completion
// based, so ops map one to one onto overlapped calls; it shares with the
// readiness core the skeleton of a backend whose completions wait in a
// ready queue (package evpoll/slots: Submit, the Wait loop, delivery, the
// coalesced Wake, the start of Close). The package imports only evpoll and
// its subpackages, golang.org/x/sys/windows and the standard library,
// and never calls Go's net or os I/O.
//
// This package is compiled and vetted, tests included, for windows
// (amd64 and arm64, CGO_ENABLED=0) by this project's CI, and its tests run
// under Wine on Linux (`make windows`, docs/PLATFORMS.md); on a Windows
// machine they run with `go test ./iocp`. On every other system only
// [Open] exists, and it returns an error wrapping [evpoll.ErrNotSupportedOnOS].
//
// # Several Ports
//
// A scheduler opens one Port per worker and submits a task's op to the
// Port of the worker running it, while Windows binds a handle to one
// completion port for the life of the handle. The first Port to use a
// handle is its home and gets every packet of every op on it; a packet of
// another Port's op is forwarded to that Port, which completes it. The
// file position of Offset -1 ops and the Append mode belong to the
// handle, shared by all Ports. [Port.Forget] drops a Port's state of a
// handle that another Port is about to close (share_windows.go).
//
// # Ops
//
//	evpoll   call                              notes
//	Accept   AcceptEx                          accept socket made per op (WSASocket, overlapped,
//	                                           not inheritable); SO_UPDATE_ACCEPT_CONTEXT and
//	                                           GetAcceptExSockaddrs (Op.Addr) on completion
//	Connect  bind(wildcard) + ConnectEx        SO_UPDATE_CONNECT_CONTEXT on completion
//	Recv     WSARecv                           one WSABUF
//	Send     WSASend                           one WSABUF (Windows has no SIGPIPE)
//	Read     ReadFile + OVERLAPPED offset      ERROR_HANDLE_EOF and ERROR_BROKEN_PIPE are Res 0
//	Write    WriteFile + OVERLAPPED offset     offset 0xFFFFFFFF:0xFFFFFFFF appends
//	Open     CreateFileW on the pool           FILE_FLAG_OVERLAPPED, not inheritable
//	Close    closesocket or CloseHandle        after CancelIoEx of the handle's ops
//	Cancel   CancelIoEx(handle, &overlapped)
//	Wake     PostQueuedCompletionStatus        coalesced
//	Wait     GetQueuedCompletionStatusEx       timeout in milliseconds
//
// An Op.Fd is a Windows handle (a SOCKET or a HANDLE) converted to int; a
// descriptor Res (Accept, Open) is the handle as int32, which is enough
// because kernel handles are 32-bit significant (a handle that is not is
// closed and reported as ERROR_INVALID_HANDLE). Package iosys makes
// suitable sockets (with evpoll/winsock). Every handle is associated with the port at its first
// op, for good; it must be overlapped (sockets are by default; [Open]
// opens files so). Negative Res values are negated Windows error codes
// (Winsock codes for sockets, from WSAGetOverlappedResult), so
// Completion.Err returns a syscall.Errno that compares equal to the
// constants of golang.org/x/sys/windows; a cancelled op is -ECANCELED with
// Go's Windows value of syscall.ECANCELED, and evpoll.FlagCancelled.
//
// # Memory the kernel writes
//
// An overlapped call gets a pointer to an OVERLAPPED that the kernel keeps
// and writes until the call's completion packet is queued. Each slot of
// the backend's slot table owns one ioBlock: the OVERLAPPED first (so the
// packet's OVERLAPPED pointer is the ioBlock), then the WSABUF, flags and
// byte-count words, AcceptEx's address buffer and accept socket, and
// ConnectEx's sockaddr. Go's garbage collector does not move heap objects,
// and the slot keeps the ioBlock, the *Op and its Buf referenced from the
// call until its packet has been dequeued, cancelled ops included; only
// then is the slot released and its ioBlock reused. A packet is trusted
// only if its ioBlock is the one its slot index names and that slot is
// waiting for the kernel. FILE_SKIP_COMPLETION_PORT_ON_SUCCESS is not
// used, so every started call produces exactly one packet, also when it
// completed at once; a call that fails at once produces none and is
// completed directly. Close cancels everything in the kernel and dequeues
// until all packets are back; tables whose ops do not return within two
// seconds stay referenced for the life of the process. The slot table
// grows in chunks as ops are submitted, up to Options.MaxInFlight, and
// never moves a slot once allocated.
//
// # File positions
//
// Handles opened for overlapped I/O have no file position: every
// ReadFile/WriteFile names its offset. For Offset -1 on a disk file the
// backend keeps the position itself: such ops take the position one at a
// time, in submission order, and advance it by their result. Offset -1
// writes on a handle opened with evpoll.Append use the end-of-file offset.
// Pipes and sockets ignore offsets.
//
// # Waiting and timeouts
//
// Wait blocks in GetQueuedCompletionStatusEx, whose timeout is a whole
// number of milliseconds, unlike the timespec of the Linux and kqueue
// backends: Wait rounds its timeout up (it never returns early) and the
// effective precision is that of the system timer (often 1 to 15.6 ms).
// Wake posts a packet with its own completion key; wakes are coalesced
// until a Wait dequeues one. Internal kicks (an Open finished on the pool)
// use a second key.
//
// # Cancel and Close ops
//
// Cancel calls CancelIoEx on the op's own OVERLAPPED; the op then
// completes with -ECANCELED and FlagCancelled, or with its real result if
// it had finished first. An Offset -1 op still queued behind its file
// position completes at once; an Open on the pool cannot be interrupted. A
// Close op cancels the ops in flight on its handle (they complete as
// cancelled), forgets the handle and closes it.
//
// Stats.Kernel counts overlapped calls started, Stats.Pool the Opens run
// on the pool, Stats.Syscalls the Windows calls made for ops and waits;
// Overflows stays zero.
//
// # Compatibility
//
// This is an implementation package of the Jade runtime, with no
// compatibility promise between versions: its API changes whenever the
// runtime needs it to. A Go host imports the root package,
// github.com/jadevm/jade, whose API and program model are what the
// module's version promises.
package iocp
