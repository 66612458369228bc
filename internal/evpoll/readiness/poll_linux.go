package readiness

import "golang.org/x/sys/unix"

// pollRdHup is added to PollNow's events: the peer's end of stream (a
// half-close) counts as readable.
const pollRdHup = unix.POLLRDHUP
