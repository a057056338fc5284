package javatext

import (
	"strconv"
	"time"
)

const millisPerDay = 86_400_000

// gregorianCutover is when java.util.Date's calendar switches from Julian
// to Gregorian: 1582-10-15T00:00:00Z, in epoch milliseconds.
const gregorianCutover = -12_219_292_800_000

var (
	weekdays = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	months   = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

// Date is java.util.Date.toString for epoch milliseconds in a JVM whose
// time zone is UTC: "EEE MMM dd HH:mm:ss zzz yyyy", e.g. "Thu Jan 01
// 00:00:00 UTC 1970". As Java's, the calendar is Julian before 15 October
// 1582 and the year is the year of its era, unpadded (1 BCE prints as 1).
func Date(ms int64) string {
	days := floorDiv(ms, millisPerDay)
	msOfDay := ms - days*millisPerDay
	var year int64
	var month, day int
	if ms >= gregorianCutover {
		t := time.UnixMilli(ms).UTC()
		year, month, day = int64(t.Year()), int(t.Month()), t.Day()
	} else {
		year, month, day = julian(days)
	}
	if year <= 0 {
		year = 1 - year
	}
	// 1970-01-01 was a Thursday; the week runs on across calendars.
	wd := int(floorMod(days+4, 7))
	secs := msOfDay / 1000
	return weekdays[wd] + " " + months[month-1] + " " + pad2(day) + " " +
		pad2(int(secs/3600)) + ":" + pad2(int(secs/60%60)) + ":" + pad2(int(secs%60)) +
		" UTC " + strconv.FormatInt(year, 10)
}

// julian is the Julian calendar date (astronomical year: 0 is 1 BCE) of a
// day counted from 1970-01-01, through its Julian day number.
func julian(days int64) (year int64, month, day int) {
	c := days + 2_440_588 + 32_082
	d := floorDiv(4*c+3, 1461)
	e := c - floorDiv(1461*d, 4)
	m := floorDiv(5*e+2, 153)
	day = int(e - floorDiv(153*m+2, 5) + 1)
	month = int(m + 3 - 12*floorDiv(m, 10))
	year = d - 4800 + floorDiv(m, 10)
	return year, month, day
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
