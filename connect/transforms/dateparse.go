package transforms

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parse reads s as the pattern describes it, in UTC, as SimpleDateFormat
// parses: numbers of any width (a field followed by another number field
// takes exactly its width), month and day names in English, AM/PM; the
// text after the last field is ignored.
func (f *dateFormat) parse(s string) (time.Time, error) {
	year, month, day := 1970, 1, 1
	hour, minute, sec, milli := 0, 0, 0, 0
	pm, hour12 := false, false
	offset := 0
	pos := 0
	fail := func() (time.Time, error) { return time.Time{}, fmt.Errorf("Unparseable date: %q", s) }
	for i, p := range f.parts {
		if p.letter == 0 {
			if !strings.HasPrefix(s[pos:], p.literal) {
				return fail()
			}
			pos += len(p.literal)
			continue
		}
		fixed := i+1 < len(f.parts) && f.parts[i+1].letter != 0 && isNumeric(f.parts[i+1])
		switch p.letter {
		case 'M', 'L':
			if p.count >= 3 {
				m, n := matchName(s[pos:], monthNames())
				if n == 0 {
					return fail()
				}
				month, pos = m+1, pos+n
				continue
			}
		case 'E':
			_, n := matchName(s[pos:], dayNames())
			if n == 0 {
				return fail()
			}
			pos += n
			continue
		case 'a':
			switch {
			case strings.HasPrefix(strings.ToUpper(s[pos:]), "AM"):
			case strings.HasPrefix(strings.ToUpper(s[pos:]), "PM"):
				pm = true
			default:
				return fail()
			}
			pos += 2
			continue
		case 'G':
			if !strings.HasPrefix(s[pos:], "AD") {
				return fail()
			}
			pos += 2
			continue
		case 'z', 'Z', 'X':
			n, off, ok := parseZone(s[pos:])
			if !ok {
				return fail()
			}
			pos, offset = pos+n, off
			continue
		}
		n, width, ok := readNumber(s[pos:], p.count, fixed)
		if !ok {
			return fail()
		}
		pos += width
		switch p.letter {
		case 'y', 'Y', 'u':
			year = n
			if p.count <= 2 && width <= 2 {
				year += 2000 // SimpleDateFormat's century window, near enough for now
			}
		case 'M', 'L':
			month = n
		case 'd':
			day = n
		case 'D':
			month, day = 1, n
		case 'H', 'k':
			hour = n % 24
		case 'h', 'K':
			hour, hour12 = n%12, true
		case 'm':
			minute = n
		case 's':
			sec = n
		case 'S':
			milli = n
		}
	}
	if hour12 && pm {
		hour += 12
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, milli*int(time.Millisecond), time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), nil
}

func isNumeric(p datePart) bool {
	switch p.letter {
	case 'M', 'L':
		return p.count < 3
	case 'E', 'a', 'G', 'z', 'Z', 'X':
		return false
	}
	return true
}

// readNumber reads an unsigned number: exactly width digits when fixed,
// else as many as there are.
func readNumber(s string, width int, fixed bool) (int, int, bool) {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' && (!fixed || n < width) {
		n++
	}
	if n == 0 {
		return 0, 0, false
	}
	v, err := strconv.Atoi(s[:n])
	return v, n, err == nil
}

func monthNames() []string {
	out := make([]string, 12)
	for i := range out {
		out[i] = time.Month(i + 1).String()
	}
	return out
}

func dayNames() []string {
	out := make([]string, 7)
	for i := range out {
		out[i] = time.Weekday(i).String()
	}
	return out
}

// matchName matches a full or three-letter English name, case
// insensitively; it returns its index and length.
func matchName(s string, names []string) (int, int) {
	for i, n := range names {
		if len(s) >= len(n) && strings.EqualFold(s[:len(n)], n) {
			return i, len(n)
		}
	}
	for i, n := range names {
		if len(s) >= 3 && strings.EqualFold(s[:3], n[:3]) {
			return i, 3
		}
	}
	return 0, 0
}

// parseZone reads Z, UTC, GMT or ±hh[:]mm; it returns the length and the
// offset in seconds.
func parseZone(s string) (int, int, bool) {
	switch {
	case strings.HasPrefix(s, "UTC"), strings.HasPrefix(s, "GMT"):
		return 3, 0, true
	case strings.HasPrefix(s, "Z"):
		return 1, 0, true
	case len(s) >= 5 && (s[0] == '+' || s[0] == '-'):
		digits := strings.ReplaceAll(s[1:min(len(s), 6)], ":", "")
		if len(digits) < 4 {
			return 0, 0, false
		}
		h, err1 := strconv.Atoi(digits[:2])
		m, err2 := strconv.Atoi(digits[2:4])
		if err1 != nil || err2 != nil {
			return 0, 0, false
		}
		n := 5
		if s[3] == ':' {
			n = 6
		}
		off := h*3600 + m*60
		if s[0] == '-' {
			off = -off
		}
		return n, off, true
	}
	return 0, 0, false
}
