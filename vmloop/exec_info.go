package vmloop

// Program returns the program the task runs.
func (e *Exec) Program() *Program { return e.prog }

// Loc returns the current function index and pc (as Where, but without
// the name). It is -1, -1 after Free.
func (e *Exec) Loc() (fn, pc int) {
	if len(e.frames) == 0 {
		return -1, -1
	}
	f := e.frames[e.fp]
	return f.fn, f.pc
}

// FuncName returns the name of function i of the task's program, or "" if
// i is out of range or the Exec holds no program.
func (e *Exec) FuncName(i int) string { return e.prog.FuncName(i) }
