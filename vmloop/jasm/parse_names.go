package jasm

import (
	"fmt"
	"strings"
)

var reservedNames = map[string]bool{
	"_": true, "i64": true, "f64": true, "ref": true, "void": true,
	"inf": true, "nan": true, "f64bits": true,
}

// checkName returns a message when s cannot name a register, label or
// function.
func checkName(s, what string) string {
	if strings.Contains(s, ".") {
		return fmt.Sprintf("%s name %s must not contain '.' (dots are for intrinsic names)", what, s)
	}
	if _, ok := rawReg(s); ok {
		return fmt.Sprintf("%s name %s is reserved: r0..r255 name raw registers", what, s)
	}
	if reservedNames[s] {
		return fmt.Sprintf("%s name %s is reserved", what, s)
	}
	return ""
}

// isName reports whether s is usable as a bare register, label or function
// name.
func isName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return checkName(s, "") == ""
}

// isIntrName reports whether s is a well-formed family.name intrinsic name.
func isIntrName(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || !isLetter(p[0]) {
			return false
		}
		for i := 1; i < len(p); i++ {
			if !isIdentChar(p[i]) {
				return false
			}
		}
	}
	return true
}

// closest returns the candidate nearest to s by edit distance, or "" when
// none is close enough to be a plausible typo.
func closest(s string, cands []string) string {
	limit := max(1, len(s)/3)
	best, bestD := "", limit+1
	for _, c := range cands {
		if d := editDistance(s, c); d < bestD && d < len(s) && d < len(c) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours cost 1.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 20
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
