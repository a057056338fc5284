package values

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// PostgreSQL's infinite dates and timestamps, and the values Debezium maps
// them to. pgjdbc represents ±infinity as the epoch-millisecond constants
// PGStatement.DATE_POSITIVE_INFINITY and DATE_NEGATIVE_INFINITY; Debezium
// reads those as microseconds for timestamps, so a MicroTimestamp of
// infinity is that constant and a Timestamp a thousandth of it.
const (
	pgInfinity    int64 = 9223372036825200000
	pgNegInfinity int64 = -9223372036832400000
)

// Debezium's LocalDate for an infinite date: the day whose epoch-day number
// overflows an int32 to MaxInt32 (infinity) and to MinInt32 (-infinity).
var (
	infinityEpochDay    = daysFromCivil(-5877611, 6, 21)
	negInfinityEpochDay = daysFromCivil(-5877611, 6, 22)
)

// Debezium's snapshot reads an infinite date through JDBC: pgjdbc's
// java.sql.Date of its infinity constants, whose deprecated year, month and
// day fields (read at UTC, in the Julian calendar before 1582) become a
// LocalDate. The epoch days of those dates, narrowed to an int, are these.
// (Infinity is 292272993-01-03; -infinity is 2 December of the year
// 292269055 BC, read as a positive year.)
const (
	jdbcInfinityEpochDay    int32 = -622191234
	jdbcNegInfinityEpochDay int32 = -625821272
)

// parseJDBCDate is parseDate on Debezium's snapshot path.
func parseJDBCDate(s string) (int32, error) {
	switch s {
	case "infinity":
		return jdbcInfinityEpochDay, nil
	case "-infinity":
		return jdbcNegInfinityEpochDay, nil
	}
	return parseDate(s)
}

// daysFromCivil is the proleptic Gregorian epoch-day number of a date, as
// java.time's LocalDate.toEpochDay (year 0 is 1 BC).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// parseDatePart reads PostgreSQL's ISO date "YYYY-MM-DD" (four or more year
// digits) into a proleptic year, month and day; bc applies the " BC" suffix
// PostgreSQL appends to dates before year 1.
func parseDatePart(s string, bc bool) (y, m, d int64, err error) {
	ys, rest, ok1 := strings.Cut(s, "-")
	ms, ds, ok2 := strings.Cut(rest, "-")
	if !ok1 || !ok2 || len(ys) < 4 || len(ms) != 2 || len(ds) != 2 {
		return 0, 0, 0, fmt.Errorf("not an ISO date: %q", s)
	}
	if y, err = strconv.ParseInt(ys, 10, 64); err == nil && y > 0 {
		if m, err = strconv.ParseInt(ms, 10, 64); err == nil {
			d, err = strconv.ParseInt(ds, 10, 64)
		}
	}
	if err != nil || y <= 0 || m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, 0, 0, fmt.Errorf("not an ISO date: %q", s)
	}
	if bc {
		y = 1 - y
	}
	return y, m, d, nil
}

// cutEra removes PostgreSQL's " BC" suffix.
func cutEra(s string) (string, bool) {
	if r, ok := strings.CutSuffix(s, " BC"); ok {
		return r, true
	}
	return s, false
}

// parseDate reads a date column's text as Debezium's epoch-day number.
func parseDate(s string) (int32, error) { return parseDateIn(s, isoCalendar) }

func parseDateIn(s string, cal calendarReading) (int32, error) {
	var days int64
	switch s {
	case "infinity":
		days = infinityEpochDay
	case "-infinity":
		days = negInfinityEpochDay
	default:
		body, bc := cutEra(s)
		y, m, d, err := parseDatePart(body, bc && cal.keepEra)
		if err != nil {
			return 0, err
		}
		days = cal.days(y, m, d)
	}
	// Debezium narrows the long epoch day to an int, wrapping as Java does.
	return int32(days), nil
}

// clock is a time of day (or, for time columns, a duration up to 24:00:00)
// in nanoseconds.
type clock int64

// parseClock reads "HH:MM:SS[.ffffff]" as Debezium's Strings.asDuration
// does: fractional digits past nine are an error, fewer are left-justified.
func parseClock(s string) (clock, error) {
	hs, rest, ok1 := strings.Cut(s, ":")
	mins, secs, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("not a time of day: %q", s)
	}
	secs, frac, _ := strings.Cut(secs, ".")
	h, err1 := strconv.ParseInt(hs, 10, 64)
	mi, err2 := strconv.ParseInt(mins, 10, 64)
	se, err3 := strconv.ParseInt(secs, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || len(frac) > 9 || !allDigits(frac) {
		return 0, fmt.Errorf("not a time of day: %q", s)
	}
	var nanos int64
	if frac != "" {
		nanos, _ = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	}
	return clock(((h*60+mi)*60+se)*1e9 + nanos), nil
}

// splitOffset cuts a trailing UTC offset ("+05", "-03:30", "+00:53:28") off
// a time or timestamp and returns it in seconds east of UTC.
func splitOffset(s string) (string, int64, error) {
	i := strings.LastIndexAny(s, "+-")
	if i <= 0 {
		return "", 0, fmt.Errorf("no UTC offset in %q", s)
	}
	parts := strings.Split(s[i+1:], ":")
	if len(parts) > 3 {
		return "", 0, fmt.Errorf("bad UTC offset in %q", s)
	}
	var secs int64
	for k, unit := range []int64{3600, 60, 1} {
		if k >= len(parts) {
			break
		}
		n, err := strconv.ParseInt(parts[k], 10, 64)
		if err != nil || len(parts[k]) != 2 {
			return "", 0, fmt.Errorf("bad UTC offset in %q", s)
		}
		secs += n * unit
	}
	if s[i] == '-' {
		secs = -secs
	}
	return s[:i], secs, nil
}

// instant is a point on the proleptic Gregorian time line: seconds since
// 1970-01-01T00:00:00 and a non-negative nanosecond part, as java.time's
// Instant holds it.
type instant struct {
	sec   int64
	nanos int64
}

// calendarReading is how a date's fields become an epoch day. PostgreSQL's
// calendar is the proleptic Gregorian one, and so is Debezium's reading of
// scalar values; array elements reach Debezium as java.sql dates and
// timestamps, whose fields pgjdbc fills in the Julian calendar before
// 1582-10-15 and whose era Debezium drops in some conversions.
type calendarReading struct {
	days    func(y, m, d int64) int64
	keepEra bool
}

// isoCalendar reads dates as PostgreSQL means them.
var isoCalendar = calendarReading{days: daysFromCivil, keepEra: true}

// julianDays is the epoch day of a date in the Julian calendar.
func julianDays(y, m, d int64) int64 {
	a := (14 - m) / 12
	yy, mm := y+4800-a, m+12*a-3
	jdn := d + (153*mm+2)/5 + 365*yy + floorDiv(yy, 4) - 32083
	return jdn - 2440588
}

// hybridDays is java.util.GregorianCalendar's default reading: Julian
// before the Gregorian reform of 1582-10-15, Gregorian from it.
func hybridDays(y, m, d int64) int64 {
	if y < 1582 || y == 1582 && (m < 10 || m == 10 && d < 15) {
		return julianDays(y, m, d)
	}
	return daysFromCivil(y, m, d)
}

// parseLocalTimestamp reads "YYYY-MM-DD HH:MM:SS[.ffffff][ BC]" as an
// instant at UTC (what a timestamp without time zone means to Debezium).
func parseLocalTimestamp(s string) (instant, error) { return parseTimestampIn(s, isoCalendar) }

func parseTimestampIn(s string, cal calendarReading) (instant, error) {
	body, bc := cutEra(s)
	ds, ts, ok := strings.Cut(body, " ")
	if !ok {
		return instant{}, fmt.Errorf("not a timestamp: %q", s)
	}
	y, m, d, err := parseDatePart(ds, bc && cal.keepEra)
	if err != nil {
		return instant{}, fmt.Errorf("not a timestamp: %q", s)
	}
	c, err := parseClock(ts)
	if err != nil || c >= 24*3600*1e9 {
		return instant{}, fmt.Errorf("not a timestamp: %q", s)
	}
	return instant{sec: cal.days(y, m, d)*86400 + int64(c)/1e9, nanos: int64(c) % 1e9}, nil
}

// parseZonedTimestamp reads a timestamptz's text (PostgreSQL prints the
// offset of the session's TimeZone, then " BC" if need be) as an instant.
func parseZonedTimestamp(s string) (instant, error) { return parseZonedTimestampIn(s, isoCalendar) }

func parseZonedTimestampIn(s string, cal calendarReading) (instant, error) {
	body, bc := cutEra(s)
	local, off, err := splitOffset(body)
	if err != nil {
		return instant{}, err
	}
	if bc {
		local += " BC"
	}
	in, err := parseTimestampIn(local, cal)
	if err != nil {
		return instant{}, err
	}
	in.sec -= off
	return in, nil
}

func (in instant) micros() int64 { return in.sec*1e6 + in.nanos/1e3 }

// millis is Instant.toEpochMilli (the nanoseconds are never negative, so
// this floors).
func (in instant) millis() int64 { return in.sec*1e3 + in.nanos/1e6 }

// nanosExact is Debezium's NanoTimestamp: epoch day × nanoseconds per day
// plus the nanosecond of the day, an error where that leaves int64.
func (in instant) nanosExact() (int64, error) {
	const nanosPerDay int64 = 86400e9
	days := floorDiv(in.sec, 86400)
	ofDay := (in.sec-days*86400)*1e9 + in.nanos
	if days > math.MaxInt64/nanosPerDay || days < math.MinInt64/nanosPerDay || days*nanosPerDay > math.MaxInt64-ofDay {
		return 0, fmt.Errorf("timestamp is outside the range of int64 epoch nanoseconds (about 1677-09-21 to 2262-04-11): %w", errConverterNull)
	}
	return days*nanosPerDay + ofDay, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// isoDate writes a year as java.time's ISO_LOCAL_DATE does: four digits,
// a '+' past 9999, a '-' before year 0.
func isoDate(b []byte, y, m, d int64) []byte {
	switch {
	case y > 9999:
		b = append(b, '+')
		b = strconv.AppendInt(b, y, 10)
	case y < 0:
		b = append(b, '-')
		b = appendPadded(b, -y, 4)
	default:
		b = appendPadded(b, y, 4)
	}
	b = append(b, '-')
	b = appendPadded(b, m, 2)
	b = append(b, '-')
	return appendPadded(b, d, 2)
}

// appendPadded appends n (not negative) with leading zeros to width digits.
func appendPadded(b []byte, n int64, width int) []byte {
	var buf [20]byte
	digits := strconv.AppendInt(buf[:0], n, 10)
	for i := len(digits); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, digits...)
}

// isoClock writes HH:MM:SS and the fraction: width digits when width is
// 1..9 (Debezium's ZonedTimestamp with the column's precision), else as
// ISO_LOCAL_TIME does, the fewest digits that hold the value.
func isoClock(b []byte, nanoOfDay int64, width int) []byte {
	secs, nanos := nanoOfDay/1e9, nanoOfDay%1e9
	b = appendPadded(b, secs/3600, 2)
	b = append(b, ':')
	b = appendPadded(b, secs/60%60, 2)
	b = append(b, ':')
	b = appendPadded(b, secs%60, 2)
	if (width < 1 || width > 9) && nanos == 0 {
		return b
	}
	var buf [9]byte
	frac := appendPadded(buf[:0], nanos, 9)
	if width >= 1 && width <= 9 {
		frac = frac[:width]
	} else {
		for len(frac) > 0 && frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
	}
	b = append(b, '.')
	return append(b, frac...)
}

// isoUTC formats an instant as Debezium's ZonedTimestamp does for a UTC
// value: ISO-8601 with 'Z'.
func (in instant) isoUTC(width int) string {
	days := floorDiv(in.sec, 86400)
	y, m, d := civilFromDays(days)
	b := make([]byte, 0, 40)
	b = isoDate(b, y, m, d)
	b = append(b, 'T')
	b = isoClock(b, (in.sec-days*86400)*1e9+in.nanos, width)
	return string(append(b, 'Z'))
}

// zonedTime converts a timetz's text to Debezium's ZonedTime: the time
// shifted to UTC (wrapping around midnight), ISO_OFFSET_TIME.
func zonedTime(s string) (string, error) {
	local, off, err := splitOffset(s)
	if err != nil {
		return "", err
	}
	c, err := parseClock(local)
	if err != nil || c >= 24*3600*1e9 {
		return "", fmt.Errorf("not a time with time zone: %q", s)
	}
	const day = 24 * 3600 * 1e9
	n := (int64(c) - off*1e9) % day
	if n < 0 {
		n += day
	}
	b := isoClock(make([]byte, 0, 24), n, 0)
	return string(append(b, 'Z')), nil
}

// pgInterval is an interval split as pgjdbc's PGInterval splits
// PostgreSQL's "postgres" IntervalStyle output.
type pgInterval struct {
	years, months, days, hours, minutes int64
	wholeSeconds, microSeconds          int64
}

// parseInterval reads IntervalStyle=postgres output ("1 year 2 mons -3 days
// +04:05:06.789") the way PGInterval.setValue does: count/unit pairs, and
// the clock part as hours, minutes and seconds sharing its sign.
func parseInterval(s string) (pgInterval, error) {
	var years, months, days, hours, minutes int64
	var seconds float64
	fields := strings.Fields(strings.ToLower(strings.NewReplacer("+", " ", "@", " ").Replace(s)))
	var count string
	num := func(v string) (int64, error) {
		if v == "" {
			return 0, nil
		}
		n, err := strconv.ParseInt(v, 10, 32)
		return n, err
	}
	bad := func() (pgInterval, error) { return pgInterval{}, fmt.Errorf("not an interval: %q", s) }
	for i, tok := range fields {
		if i%2 == 0 {
			colon := strings.IndexByte(tok, ':')
			if colon < 0 {
				count = tok
				continue
			}
			neg := tok[0] == '-'
			off := 0
			if neg {
				off = 1
			}
			if colon+3 > len(tok) {
				return bad()
			}
			var err error
			if hours, err = num(tok[off:colon]); err != nil {
				return bad()
			}
			if minutes, err = num(tok[colon+1 : colon+3]); err != nil {
				return bad()
			}
			seconds = 0
			if c2 := strings.IndexByte(tok[colon+1:], ':'); c2 >= 0 {
				if seconds, err = strconv.ParseFloat(tok[colon+1+c2+1:], 64); err != nil {
					return bad()
				}
			}
			if neg {
				hours, minutes, seconds = -hours, -minutes, -seconds
			}
			count = ""
			continue
		}
		n, err := num(count)
		if err != nil && !strings.HasPrefix(tok, "sec") {
			return bad()
		}
		switch {
		case strings.HasPrefix(tok, "year"):
			years = n
		case strings.HasPrefix(tok, "mon"):
			months = n
		case strings.HasPrefix(tok, "day"):
			days = n
		case strings.HasPrefix(tok, "hour"):
			hours = n
		case strings.HasPrefix(tok, "min"):
			minutes = n
		case strings.HasPrefix(tok, "sec"):
			if seconds, err = strconv.ParseFloat(count, 64); err != nil {
				return bad()
			}
		}
	}
	// PGInterval.setSeconds keeps whole seconds and rounded microseconds.
	// Java's Math.round rounds half up (toward positive infinity).
	total := javaLong(math.Floor(seconds*1e6 + 0.5))
	return pgInterval{years, months, days, hours, minutes, total / 1e6, total % 1e6}, nil
}

// seconds is PGInterval.getSeconds.
func (iv pgInterval) seconds() float64 {
	return float64(iv.wholeSeconds) + float64(iv.microSeconds)/1e6
}

// micros is Debezium's MicroDuration.durationMicros with its average month
// of 365.25/12 days, in floating point as Debezium computes it.
func (iv pgInterval) micros() int64 {
	const daysPerMonth = 365.25 / 12.0
	numberOfDays := float64(int32(iv.years*12+iv.months))*daysPerMonth + float64(iv.days)
	numberOfSeconds := (((numberOfDays*24+float64(iv.hours))*60)+float64(iv.minutes))*60 + iv.seconds()
	return javaLong(numberOfSeconds * 1e6)
}

// javaLong is Java's (long) cast of a double: truncation, saturating at the
// ends, NaN to zero.
func javaLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// iso is Debezium's Interval.toIsoString: PnYnMnDTnHnMnS with the seconds
// as BigDecimal.valueOf(double) cut to nine places, trailing zeros stripped.
func (iv pgInterval) iso() (string, error) {
	secs, err := parseDecimal(connect.JavaDouble(iv.seconds()))
	if err != nil {
		return "", err
	}
	if secs.scale > 9 {
		// RoundingMode.DOWN: truncate toward zero.
		f := new(big.Int).Exp(bigTen, big.NewInt(int64(secs.scale-9)), nil)
		secs = decimal{unscaled: f.Quo(secs.unscaled, f), scale: 9}
	}
	return fmt.Sprintf("P%dY%dM%dDT%dH%dM%sS", iv.years, iv.months, iv.days, iv.hours, iv.minutes,
		secs.stripTrailingZeros().plainString()), nil
}
