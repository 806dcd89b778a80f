package jepsen

import (
	"strconv"
	"strings"
	"unicode"
)

// The EDN reader's scalars: strings, and the tokens that are symbols,
// keywords, numbers and characters.

// str reads a string's body after its opening quote.
func (d *ednReader) str(v ednValue) (string, error) {
	var b strings.Builder
	for {
		c, err := d.rune()
		if err != nil {
			return "", err
		}
		switch c {
		case -1:
			return "", d.errAt(v.line, v.col, `string never closed: add the closing "`)
		case '"':
			return b.String(), nil
		case '\\':
			e, err := d.rune()
			if err != nil {
				return "", err
			}
			r, ok := map[rune]string{'n': "\n", 't': "\t", 'r': "\r", '"': `"`, '\\': `\`, 'b': "\b", 'f': "\f"}[e]
			if e == 'u' {
				hex := make([]rune, 0, 4)
				for range 4 {
					h, err := d.rune()
					if err != nil {
						return "", err
					}
					hex = append(hex, h)
				}
				n, perr := strconv.ParseUint(string(hex), 16, 32)
				r, ok = string(rune(n)), perr == nil
			}
			if !ok {
				return "", d.errAt(d.lastLine, d.lastC, `unknown escape \%c in a string: write \\ for a backslash`, e)
			}
			b.WriteString(r)
		default:
			b.WriteRune(c)
		}
	}
}

// token reads the rest of a symbol, keyword, number or character.
func (d *ednReader) token(start string) (string, error) {
	b := []rune(start)
	for {
		c, err := d.rune()
		if err != nil {
			return "", err
		}
		if c == -1 {
			return string(b), nil
		}
		if !isEDNSymbolRune(c) && !(c == '#' || c == ':' || c == '\'') {
			d.unread()
			return string(b), nil
		}
		if len(b) >= maxEDNToken {
			return "", d.errAt(d.lastLine, d.lastC-len(b), "a symbol, keyword or number longer than %d characters: not a Jepsen history", maxEDNToken)
		}
		b = append(b, c)
	}
}

func isEDNSymbolRune(c rune) bool {
	return unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune(".*+!-_?$%&=<>/", c)
}

// atom makes a symbol or number of text.
func (d *ednReader) atom(v ednValue, text string) (ednValue, error) {
	switch text {
	case "nil":
		return v, nil
	case "true", "false":
		v.kind, v.b = ednBool, text == "true"
		return v, nil
	}
	digits := strings.TrimLeft(text, "+-")
	if digits == "" || !unicode.IsDigit(rune(digits[0])) {
		v.kind, v.s = ednSymbol, text
		return v, nil
	}
	if n, err := strconv.ParseInt(strings.TrimSuffix(text, "N"), 10, 64); err == nil {
		v.kind, v.i = ednInt, n
		return v, nil
	}
	if _, err := strconv.ParseFloat(strings.TrimSuffix(text, "M"), 64); err == nil {
		v.kind, v.s = ednFloat, text
		return v, nil
	}
	return v, d.errAt(v.line, v.col, "%q is not a number lockcheck can read (an integer must fit in 64 bits)", text)
}
