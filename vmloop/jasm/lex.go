package jasm

import (
	"math"
	"strconv"
	"strings"
)

// The lexer works one line at a time: every construct of the language fits
// on one line, and a bad line is reported once and skipped.

type tokKind uint8

const (
	tIdent     tokKind = iota // foo, io.print_i64, r3, _, inf, nan
	tDirective                // .func (text includes the dot)
	tInt                      // 42, -7, 0xff
	tFloat                    // 1.5, 1e3, -inf
	tString                   // "text" (sval holds the decoded bytes)
	tIndex                    // #3
	tComma
	tLParen
	tRParen
	tColon
	tArrow // ->
)

var tokNames = [...]string{
	tIdent: "name", tDirective: "directive", tInt: "integer", tFloat: "float",
	tString: "string", tIndex: "pool index", tComma: "','", tLParen: "'('",
	tRParen: "')'", tColon: "':'", tArrow: "'->'",
}

type token struct {
	kind tokKind
	text string // source text
	col  int    // 1-based byte column
	ival int64
	fval float64
	sval string
}

func (t token) describe() string {
	switch t.kind {
	case tComma, tLParen, tRParen, tColon, tArrow:
		return tokNames[t.kind]
	case tString:
		return "string " + t.text
	}
	return tokNames[t.kind] + " " + t.text
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isIdentChar(c byte) bool {
	return isLetter(c) || isDigit(c)
}

// lexLine splits one source line into tokens. On an error it returns the
// position and message of the first problem; the caller skips the line.
func lexLine(s string) (toks []token, errCol int, errMsg string) {
	i := 0
	for i < len(s) {
		c := s[i]
		start := i
		col := i + 1
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == ';':
			return toks, 0, ""
		case c == ',':
			toks = append(toks, token{kind: tComma, text: ",", col: col})
			i++
		case c == '(':
			toks = append(toks, token{kind: tLParen, text: "(", col: col})
			i++
		case c == ')':
			toks = append(toks, token{kind: tRParen, text: ")", col: col})
			i++
		case c == ':':
			toks = append(toks, token{kind: tColon, text: ":", col: col})
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '>':
			toks = append(toks, token{kind: tArrow, text: "->", col: col})
			i += 2
		case c == '#':
			i++
			for i < len(s) && isIdentChar(s[i]) {
				i++
			}
			text := s[start:i]
			n, err := strconv.ParseUint(text[1:], 10, 31)
			if err != nil || len(text) == 1 {
				return toks, col, "malformed pool index " + strconv.Quote(text) + "; write #N with a decimal N, e.g. #0"
			}
			toks = append(toks, token{kind: tIndex, text: text, col: col, ival: int64(n)})
		case c == '"':
			str, n, msg, mcol := lexString(s[i:])
			if msg != "" {
				return toks, col + mcol, msg
			}
			i += n
			toks = append(toks, token{kind: tString, text: s[start:i], col: col, sval: str})
		case c == '.' && i+1 < len(s) && isLetter(s[i+1]):
			i++
			for i < len(s) && isIdentChar(s[i]) {
				i++
			}
			toks = append(toks, token{kind: tDirective, text: s[start:i], col: col})
		case isLetter(c):
			for i < len(s) && isIdentChar(s[i]) {
				i++
			}
			// family.name: dots join identifier segments.
			for i+1 < len(s) && s[i] == '.' && isLetter(s[i+1]) {
				i++
				for i < len(s) && isIdentChar(s[i]) {
					i++
				}
			}
			toks = append(toks, token{kind: tIdent, text: s[start:i], col: col})
		case (c == '-' || c == '+') && strings.HasPrefix(s[i+1:], "inf") && (i+4 == len(s) || !isIdentChar(s[i+4]) && s[i+4] != '.'):
			i += 4
			f := math.Inf(1)
			if c == '-' {
				f = math.Inf(-1)
			}
			toks = append(toks, token{kind: tFloat, text: s[start:i], col: col, fval: f})
		case isDigit(c) || (c == '-' || c == '+') && i+1 < len(s) && isDigit(s[i+1]):
			tok, n, msg := lexNumber(s[i:])
			if msg != "" {
				return toks, col, msg
			}
			tok.col = col
			i += n
			toks = append(toks, tok)
		default:
			if c < 0x20 || c == 0x7f {
				return toks, col, "unexpected control character " + strconv.QuoteRune(rune(c))
			}
			if c >= 0x80 {
				return toks, col, "unexpected non-ASCII character outside a string literal"
			}
			return toks, col, "unexpected character " + strconv.QuoteRune(rune(c))
		}
	}
	return toks, 0, ""
}

// lexString decodes a string literal at the start of s. It returns the
// decoded bytes, the number of source bytes used, and on error a message
// with its column offset within s.
func lexString(s string) (val string, n int, msg string, col int) {
	var sb strings.Builder
	i := 1
	for i < len(s) {
		c := s[i]
		switch c {
		case '"':
			return sb.String(), i + 1, "", 0
		case '\\':
			if i+1 >= len(s) {
				return "", 0, "unterminated string literal: add the closing \"", i
			}
			e := s[i+1]
			switch e {
			case 'n':
				sb.WriteByte('\n')
			case 't':
				sb.WriteByte('\t')
			case 'r':
				sb.WriteByte('\r')
			case '0':
				sb.WriteByte(0)
			case '\\':
				sb.WriteByte('\\')
			case '"':
				sb.WriteByte('"')
			case 'x':
				if i+3 >= len(s) || !isHex(s[i+2]) || !isHex(s[i+3]) {
					return "", 0, `malformed \x escape: write exactly two hex digits, e.g. \x0a`, i
				}
				v, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
				sb.WriteByte(byte(v))
				i += 2
			default:
				return "", 0, "unknown escape \\" + escChar(e) + ` in string literal (known: \n \t \r \0 \\ \" \xNN)`, i
			}
			i += 2
		default:
			sb.WriteByte(c)
			i++
		}
	}
	return "", 0, "unterminated string literal: add the closing \" (strings cannot span lines; use \\n)", 0
}

func escChar(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return string(rune(c))
	}
	return strconv.QuoteRune(rune(c))
}

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// lexNumber scans an integer or float literal at the start of s (an
// optional sign, then a digit).
func lexNumber(s string) (tok token, n int, msg string) {
	i := 0
	if s[0] == '-' || s[0] == '+' {
		i++
	}
	body := i
	hex := strings.HasPrefix(s[i:], "0x") || strings.HasPrefix(s[i:], "0X")
	for i < len(s) {
		c := s[i]
		if isIdentChar(c) || c == '.' {
			i++
			continue
		}
		if (c == '+' || c == '-') && i > body {
			p := s[i-1]
			if !hex && (p == 'e' || p == 'E') || hex && (p == 'p' || p == 'P') {
				i++
				continue
			}
		}
		break
	}
	text := s[:i]
	digits := strings.ToLower(s[body:i])
	neg := s[0] == '-'
	isFloat := false
	if hex {
		isFloat = strings.ContainsAny(digits, ".p")
	} else {
		isFloat = strings.ContainsAny(digits, ".e")
	}
	if isFloat {
		if strings.HasPrefix(digits, "0b") || strings.HasPrefix(digits, "0o") {
			return token{}, 0, "malformed number " + strconv.Quote(text)
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return token{}, 0, "float literal " + text + " is out of the range of f64"
			}
			return token{}, 0, "malformed float literal " + strconv.Quote(text) + " (examples: 1.5, -2e10, 0x1p-3, inf, nan)"
		}
		return token{kind: tFloat, text: text, fval: f}, i, ""
	}
	var mag uint64
	var err error
	prefixed := len(digits) > 1 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'b' || digits[1] == 'o')
	if prefixed {
		mag, err = strconv.ParseUint(digits, 0, 64)
	} else {
		mag, err = strconv.ParseUint(digits, 10, 64)
	}
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return token{}, 0, "integer literal " + text + " does not fit in 64 bits"
		}
		return token{}, 0, "malformed integer literal " + strconv.Quote(text) + " (examples: 42, -7, 0xff, 0b101, 0o17)"
	}
	var v int64
	switch {
	case neg && mag > 1<<63:
		return token{}, 0, "integer literal " + text + " is below the i64 minimum -9223372036854775808"
	case neg:
		v = -int64(mag)
	case !prefixed && mag > math.MaxInt64:
		return token{}, 0, "integer literal " + text + " is above the i64 maximum 9223372036854775807 (hex literals may use all 64 bits)"
	default:
		v = int64(mag) // hex, binary and octal literals may set the sign bit
	}
	return token{kind: tInt, text: text, ival: v}, i, ""
}
