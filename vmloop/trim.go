package vmloop

// Stacks at most this large are never trimmed (Trim): under them a copy
// costs more than the memory it would give back (512 B of registers,
// 384 B of frames).
const (
	trimRegs   = 64
	trimFrames = 16
)

// Trim gives back the register and frame capacity that e does not use. A
// recycled Exec keeps the stacks of the task before it (up to
// maxRecycledRegs words and maxRecycledFrames frames, for the next spawn),
// and a small task that then waits would hold a deeper task's stacks all
// along: a stack over its floor and over four times its length (the
// most the task used: lengths do not shrink on return) is copied into
// one of its length, and the budget gets the difference back. Call it
// between two Runs; the scheduler does when a task parks.
func (e *Exec) Trim() {
	if cap(e.regs) > trimRegs || cap(e.frames) > trimFrames { // inlined: most stacks are small
		e.trim()
	}
}

func (e *Exec) trim() {
	regs, frames := cap(e.regs), cap(e.frames)
	if regs <= 4*len(e.regs) && frames <= 4*len(e.frames) {
		return
	}
	if regs > trimRegs && regs > 4*len(e.regs) {
		r := make([]uint64, len(e.regs))
		copy(r, e.regs)
		e.regs = r
	}
	if frames > trimFrames && frames > 4*len(e.frames) {
		f := make([]frame, len(e.frames))
		copy(f, e.frames)
		e.frames = f
	}
	e.restack(regs, frames)
}
