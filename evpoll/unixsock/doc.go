// Package unixsock holds the small Unix helpers that the backends in
// packages uring and kqueue, the readiness core and package iosys share:
// the mapping of portable open flags to O_* bits and the conversions
// between netip.AddrPort and the x/sys/unix socket addresses. It makes no
// system call and keeps no state.
//
// The package builds on linux, darwin and freebsd; elsewhere it is empty.
package unixsock
