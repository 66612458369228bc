// Package winsock holds the small Winsock helpers that the IOCP backend
// (package iocp) and package iosys share, the Windows counterpart of
// evpoll/unixsock: WSAStartup once per process, overlapped sockets, and
// the conversions between netip.AddrPort and windows.Sockaddr. It keeps
// no state but the WSAStartup; the sockets it makes belong to its caller
// (see package iosys for who owns a descriptor).
//
// The package builds on windows; elsewhere it is empty.
package winsock
