package vmloop

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// QuoteString writes s as a Jade string literal (docs/JASM.md): printable
// ASCII and printable UTF-8 as they are, \" \\ \n \t \r \0 escaped, and
// every other byte as \xNN. It is what jade asm --dis prints a string
// constant or an odd function name as.
func QuoteString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\n':
			sb.WriteString(`\n`)
		case '\t':
			sb.WriteString(`\t`)
		case '\r':
			sb.WriteString(`\r`)
		case 0:
			sb.WriteString(`\0`)
		default:
			if c >= 0x20 && c < 0x7f {
				sb.WriteByte(c)
				break
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if c >= 0x80 && r != utf8.RuneError && unicode.IsPrint(r) {
				sb.WriteString(s[i : i+n])
				i += n
				continue
			}
			fmt.Fprintf(&sb, `\x%02x`, c)
		}
		i++
	}
	sb.WriteByte('"')
	return sb.String()
}

// QuoteName returns a function name for a message, a trap or a stack: the
// name itself when it is a plain assembler name (a letter or '_', then
// letters, digits and '_'), else the name as a Jade string literal
// (QuoteString), the way jade asm --dis prints it. A name read from a .jbc
// is never trusted: a newline or an escape sequence in it cannot forge a
// log line or garble a terminal.
func QuoteName(s string) string {
	if plainName(s) {
		return s
	}
	return QuoteString(s)
}

// plainName reports whether s is a letter or '_' followed by letters,
// digits, '_' and the '.' of a module's functions (alias.fn).
func plainName(s string) bool {
	if s == "" || s[len(s)-1] == '.' {
		return false
	}
	for i, c := range []byte(s) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '.')) {
			return false
		}
	}
	return true
}
