//go:build darwin || freebsd

package readiness

// pollRdHup is added to PollNow's events; on the BSDs POLLIN already
// reports the peer's end of stream.
const pollRdHup = 0
