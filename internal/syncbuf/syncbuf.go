// Package syncbuf is a bytes.Buffer that many goroutines may write to and
// read at once: the stderr of a child process collected while it runs
// (exec.Cmd copies a pipe into it from a goroutine of its own) and read
// for an error message meanwhile.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer behind a mutex. The zero value is empty and
// ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what has been written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
