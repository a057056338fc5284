package transforms

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/connect"
)

// dateFormat is a java.text.SimpleDateFormat pattern, formatting in UTC as
// Kafka's transformations set it: letters repeat to give a field's width,
// text between single quotes is literal (two single quotes make one).
type dateFormat struct {
	parts []datePart
	src   string // the pattern as written (toPattern)
}

type datePart struct {
	letter  byte // 0: literal
	count   int
	literal string
}

// dateLetters are the pattern letters formatted; any other ASCII letter is
// refused, as SimpleDateFormat refuses letters it does not know.
const dateLetters = "GyYMLdDEuaHkKhmsSzZX"

func parseDateFormat(p string) (*dateFormat, error) {
	f := &dateFormat{src: p}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			j := i + 1
			var lit strings.Builder
			for ; j < len(p); j++ {
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						lit.WriteByte('\'')
						j++
						continue
					}
					break
				}
				lit.WriteByte(p[j])
			}
			if j >= len(p) && (i+1 == len(p) || p[len(p)-1] != '\'') {
				return nil, fmt.Errorf("Unterminated quote")
			}
			if j == i+1 {
				lit.WriteByte('\'') // '' outside quotes
			}
			f.parts = append(f.parts, datePart{literal: lit.String()})
			i = j + 1
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			if !strings.ContainsRune(dateLetters, rune(c)) {
				return nil, fmt.Errorf("Illegal pattern character '%c'", c)
			}
			j := i
			for j < len(p) && p[j] == c {
				j++
			}
			f.parts = append(f.parts, datePart{letter: c, count: j - i})
			i = j
		default:
			f.parts = append(f.parts, datePart{literal: string(c)})
			i++
		}
	}
	return f, nil
}

func (f *dateFormat) format(t time.Time) string {
	t = t.UTC()
	var b strings.Builder
	for _, p := range f.parts {
		if p.letter == 0 {
			b.WriteString(p.literal)
			continue
		}
		b.WriteString(formatField(t, p.letter, p.count))
	}
	return b.String()
}

func pad(n, width int) string {
	s := strconv.Itoa(n)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

func formatField(t time.Time, letter byte, n int) string {
	switch letter {
	case 'G':
		return "AD"
	case 'y', 'Y', 'u':
		if letter == 'u' {
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			return pad(wd, n)
		}
		y := t.Year()
		if letter == 'Y' {
			y, _ = t.ISOWeek()
		}
		if n == 2 {
			return pad(y%100, 2)
		}
		return pad(y, n)
	case 'M', 'L':
		switch {
		case n >= 4:
			return t.Month().String()
		case n == 3:
			return t.Month().String()[:3]
		}
		return pad(int(t.Month()), n)
	case 'd':
		return pad(t.Day(), n)
	case 'D':
		return pad(t.YearDay(), n)
	case 'E':
		if n >= 4 {
			return t.Weekday().String()
		}
		return t.Weekday().String()[:3]
	case 'a':
		if t.Hour() < 12 {
			return "AM"
		}
		return "PM"
	case 'H':
		return pad(t.Hour(), n)
	case 'k':
		h := t.Hour()
		if h == 0 {
			h = 24
		}
		return pad(h, n)
	case 'K':
		return pad(t.Hour()%12, n)
	case 'h':
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		return pad(h, n)
	case 'm':
		return pad(t.Minute(), n)
	case 's':
		return pad(t.Second(), n)
	case 'S':
		return pad(t.Nanosecond()/int(time.Millisecond), n)
	case 'z':
		if n >= 4 {
			return "Coordinated Universal Time"
		}
		return "UTC"
	case 'Z':
		return "+0000"
	case 'X':
		return "Z"
	}
	return ""
}

// describe is a short rendering of a record for error messages.
func describe(r *connect.TransformRecord) string {
	return fmt.Sprintf("ConnectRecord{topic='%s', kafkaPartition=%s, key=%v, value=%v, timestamp=%s}",
		r.Topic, partitionString(r.KafkaPartition), r.Key, r.Value, timestampString(r.Timestamp))
}

func partitionString(p *int32) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(int(*p))
}

func timestampString(t time.Time) string {
	if t.IsZero() {
		return "null"
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}
