package configprovider

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseProperties reads a Java properties file as java.util.Properties.load
// does, since the file provider's files are written for Kafka: "#" and "!"
// start comments, a key ends at the first unescaped "=", ":" or blank, a
// line ending in an odd number of backslashes continues on the next (whose
// leading blanks are dropped), and \t, \n, \r, \f and \uXXXX are escapes; any
// other escaped character stands for itself. A later key wins.
func ParseProperties(r io.Reader) (map[string]string, error) {
	props := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var logical strings.Builder
	continuing := false
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimLeft(line, " \t\f")
		if !continuing {
			if trimmed == "" || trimmed[0] == '#' || trimmed[0] == '!' {
				continue
			}
		}
		line = trimmed
		if endsEscaped(line) {
			logical.WriteString(line[:len(line)-1])
			continuing = true
			continue
		}
		logical.WriteString(line)
		continuing = false
		k, v, err := splitProperty(logical.String())
		if err != nil {
			return nil, err
		}
		props[k] = v
		logical.Reset()
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading properties: %w", err)
	}
	if continuing {
		k, v, err := splitProperty(logical.String())
		if err != nil {
			return nil, err
		}
		props[k] = v
	}
	return props, nil
}

// endsEscaped reports whether line ends in an odd number of backslashes.
func endsEscaped(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits one logical line into its unescaped key and value.
func splitProperty(line string) (string, string, error) {
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	key := line[:min(i, len(line))]
	rest := ""
	if i < len(line) {
		rest = strings.TrimLeft(line[i:], " \t\f")
		if rest != "" && (rest[0] == '=' || rest[0] == ':') && (line[i] == ' ' || line[i] == '\t' || line[i] == '\f' || line[i] == rest[0]) {
			rest = strings.TrimLeft(rest[1:], " \t\f")
		}
	}
	k, err := unescape(key)
	if err != nil {
		return "", "", err
	}
	v, err := unescape(rest)
	if err != nil {
		return "", "", err
	}
	return k, v, nil
}

// unescape resolves the escapes of a key or value.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("malformed \\uxxxx encoding")
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("malformed \\uxxxx encoding")
			}
			b.WriteRune(rune(n))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}
