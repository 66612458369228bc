// Package jasm is the Jade assembler and disassembler: the text form
// (.jasm) of a vmloop.Program. docs/JASM.md is the syntax reference.
//
// Everything about instructions (mnemonics, operand order, operand kinds,
// fields) is read from the ISA table in vmloop/isa.go; the package adds
// directives, labels, literals, type checks of named registers and a few
// friendly forms (mov, const, join, and call/spawn/intr/tailcall without
// an explicit window) that lower to plain opcodes.
//
// Assemble does not verify: run vmloop.Verify on its result. Disassemble
// prints text that Assemble turns back into the same program.
//
// # Compatibility
//
// This is an implementation package of the Jade runtime, with no
// compatibility promise between versions: its API changes whenever the
// runtime needs it to. A Go host imports the root package,
// github.com/jadevm/jade, whose API and program model are what the
// module's version promises.
package jasm
