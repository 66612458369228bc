// Package unixsock holds the small Unix helpers that the backends in
// packages uring and kqueue, the readiness core and package iosys share:
// the mapping of portable open flags to O_* bits, the conversions between
// netip.AddrPort and the x/sys/unix socket addresses, and the per-OS way
// to make a socket the backends can poll ([NewSocket], [Accept]:
// non-blocking and close-on-exec, sends that never raise SIGPIPE). It
// keeps no state; the sockets it makes belong to its caller (see package
// iosys for who owns a descriptor).
//
// The package builds on linux, darwin and freebsd; elsewhere it is empty.
package unixsock
