package connect

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// This file renders floating-point numbers as Java 17's Double.toString and
// Float.toString do (jdk.internal.math.FloatingDecimal). Kafka Connect 4.4
// runs on Java 17 or newer; Java 19 replaced the algorithm by one that always
// finds the shortest digits (what Go's strconv does), but Java 17's, which
// the conformance worker runs on, differs in two ways that users see:
//
//   - a whole number below 2^63 is printed from its exact integer value,
//     rounded only where the digits are below the precision of the type
//     (7.5250996711784448E16 where the shortest is 7.525099671178445E16);
//   - in scientific notation at least two digits are generated before the
//     stopping test is trusted, and the test is symmetric: at a power of
//     two, where the next value down is half as far as the next one up, it
//     uses the smaller gap on both sides; so some values get a digit more
//     than needed (9.999999999999999E22 for 1e23).
//
// The digit generation below is Java 17's: the value is B/S·10^decExp with
// integers B and S, M is half a unit in the last place scaled like B, and
// digits are taken off B/S until the remainder is within M of either end.
// Java computes in 32-bit, 64-bit or arbitrary-precision integers depending
// on the magnitudes, and its 32- and 64-bit variants wrap around in places
// (and, unlike the big one, do not round up when the remainder reaches the
// upper end exactly); they
// are reproduced with the same widths so that every value prints the same.
// TestJavaFloatText checks it against 3,700 values Java 17 printed.

// fdDigits is a value's decimal form: the digits Java generated (with no
// leading zero; a trailing one is possible, as in 1.0E-5) and exp such that
// the value is 0.digits·10^exp.
type fdDigits struct {
	digits []byte
	exp    int
}

// javaFloatDigits is what Java 17 prints for a finite, non-zero magnitude
// given as its significand (hidden bit included, not shifted),
// its unbiased binary exponent and the number of significant bits of its
// type (53 for double, 24 for float; fewer for subnormals).
func javaFloatDigits(fract uint64, binExp, nSignificantBits int) fdDigits {
	const expShift = 52 // position of the hidden bit in a double
	tailZeros := bits.TrailingZeros64(fract)
	nFractBits := expShift + 1 - tailZeros
	nTinyBits := max(0, nFractBits-binExp-1)

	// A whole number below 2^63 is printed from its integer value.
	if nTinyBits == 0 && binExp >= -21 && binExp <= 62 {
		insignificant := 0
		if binExp > nSignificantBits {
			insignificant = insignificantDigitsForPow2(binExp - nSignificantBits - 1)
		}
		v := fract
		if binExp >= expShift {
			v <<= uint(binExp - expShift)
		} else {
			v >>= uint(expShift - binExp)
		}
		return longDigits(v, insignificant)
	}

	decExp := estimateDecExp(fract, binExp)
	b5 := max(0, -decExp)
	b2 := b5 + nTinyBits + binExp
	s5 := max(0, decExp)
	s2 := s5 + nTinyBits
	m5 := b5
	m2 := b2 - nSignificantBits

	fract >>= uint(tailZeros)
	b2 -= nFractBits - 1
	common := min(b2, s2)
	b2 -= common
	s2 -= common
	m2 -= common
	// Below an exact power of two the next value is half as far away.
	if nFractBits == 1 {
		m2--
	}
	if m2 < 0 {
		b2 -= m2
		s2 -= m2
		m2 = 0
	}

	g := digitGen{decExp: decExp}
	bBits := nFractBits + b2 + pow5Bits(b5)
	tenSBits := s2 + 1 + pow5Bits(s5+1)
	switch {
	case bBits < 32 && tenSBits < 32:
		runFixed(&g, int32(fract)*int32(pow5(b5))<<uint(b2), int32(pow5(s5))<<uint(s2), int32(pow5(m5))<<uint(m2))
	case bBits < 64 && tenSBits < 64:
		runFixed(&g, int64(fract)*int64(pow5(b5))<<uint(b2), int64(pow5(s5))<<uint(s2), int64(pow5(m5))<<uint(m2))
	default:
		g.runBig(fract, b5, b2, s5, s2, m5, m2)
	}
	return g.result()
}

// digitGen is the state of one digit generation.
type digitGen struct {
	decExp    int
	digits    []byte
	low, high bool
	// cmpHalf compares twice the final remainder with one unit of the
	// last digit: the tie-break when both roundings stay in range.
	cmpHalf int
}

// first takes the first quotient: a zero means the exponent estimate was
// one too high, and is dropped. In scientific notation (decExp outside
// [-3, 8)) Java insists on a second digit whatever the stopping test says.
func (g *digitGen) first(q int) {
	if q == 0 && !g.high {
		g.decExp--
	} else {
		g.digits = append(g.digits, byte('0'+q))
	}
	if g.decExp < -3 || g.decExp >= 8 {
		g.low, g.high = false, false
	}
}

// runFixed generates the digits in Java's int (int32) or long (int64)
// arithmetic, whichever Java 17 picks for the value's size: the width
// matters, since m and the final difference wrap around as Java's do.
func runFixed[T int32 | int64](g *digitGen, b, s, m T) {
	tens := s * 10
	q := b / s
	b = 10 * (b % s)
	m *= 10
	g.low, g.high = b < m, b+m > tens
	g.first(int(q))
	for !g.low && !g.high {
		q = b / s
		b = 10 * (b % s)
		m *= 10
		if m > 0 {
			g.low, g.high = b < m, b+m > tens
		} else {
			// m wrapped around: it is certainly beyond both ends.
			g.low, g.high = true, true
		}
		g.digits = append(g.digits, byte('0'+q))
	}
	// Java takes the difference in the same width, wrap-around included.
	g.cmpHalf = sign64(int64((b << 1) - tens))
}

func (g *digitGen) runBig(fract uint64, b5, b2, s5, s2, m5, m2 int) {
	pow52 := func(p5, p2 int) *big.Int {
		v := new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(p5)), nil)
		return v.Lsh(v, uint(p2))
	}
	s := pow52(s5, s2)
	b := pow52(b5, b2)
	b.Mul(b, new(big.Int).SetUint64(fract))
	m := pow52(m5, m2)
	m.Mul(m, big.NewInt(10))
	tens := new(big.Int).Mul(s, big.NewInt(10))
	ten := big.NewInt(10)
	q, sum := new(big.Int), new(big.Int)
	// next takes one digit: q = b/s, b = 10·(b mod s).
	next := func() int {
		q.QuoRem(b, s, b)
		b.Mul(b, ten)
		return int(q.Int64())
	}
	// Unlike the 32- and 64-bit variants, this one rounds up when the
	// remainder reaches the upper end exactly.
	test := func() {
		g.low = b.Cmp(m) < 0
		g.high = tens.Cmp(sum.Add(b, m)) <= 0
	}
	d := next()
	test()
	g.first(d)
	for !g.low && !g.high {
		d = next()
		m.Mul(m, ten)
		test()
		g.digits = append(g.digits, byte('0'+d))
	}
	g.cmpHalf = new(big.Int).Lsh(b, 1).Cmp(tens)
}

// result rounds the last digit as the stopping test says.
func (g *digitGen) result() fdDigits {
	d := fdDigits{digits: g.digits, exp: g.decExp + 1}
	if g.high && (!g.low || g.cmpHalf > 0 || g.cmpHalf == 0 && (d.digits[len(d.digits)-1]-'0')&1 != 0) {
		d.roundUp()
	}
	return d
}

// roundUp adds one to the last digit, carrying; all nines become a 1 with
// a larger exponent. Java leaves the zeros a carry makes in place.
func (d *fdDigits) roundUp() {
	i := len(d.digits) - 1
	for i > 0 && d.digits[i] == '9' {
		d.digits[i] = '0'
		i--
	}
	if d.digits[i] == '9' {
		d.digits[0] = '1'
		d.exp++
		return
	}
	d.digits[i]++
}

// longDigits is the decimal form of v, its last insignificant digits
// rounded away (half up) and trailing zeros dropped.
func longDigits(v uint64, insignificant int) fdDigits {
	exp := insignificant
	if insignificant > 0 {
		p := uint64(math.Pow10(insignificant))
		r := v % p
		v /= p
		if r >= p/2 {
			v++
		}
	}
	for v%10 == 0 {
		v /= 10
		exp++
	}
	var buf [20]byte
	i := len(buf)
	for v > 0 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return fdDigits{digits: append([]byte(nil), buf[i:]...), exp: exp + len(buf) - i}
}

// insignificantDigitsForPow2 is the number of decimal digits below the
// precision of a whole number whose last significant bit is worth 2^p2:
// floor(log10(2^p2)) for 1 < p2 < 64, else 0.
func insignificantDigitsForPow2(p2 int) int {
	if p2 <= 1 || p2 >= 64 {
		return 0
	}
	n := 0
	for v := uint64(1) << uint(p2); v >= 10; v /= 10 {
		n++
	}
	return n
}

// estimateDecExp estimates floor(log10(v)) from the significand's first
// bits and the binary exponent, as Java does; it may be one too high, which
// the first digit corrects.
func estimateDecExp(fract uint64, binExp int) int {
	const signifMask = 1<<52 - 1
	d2 := math.Float64frombits(math.Float64bits(1) | fract&signifMask)
	// The conversions keep each product rounded on its own (no fused
	// multiply-add), as Java evaluates it.
	d := float64((d2-1.5)*0.289529654) + 0.176091259 + float64(float64(binExp)*0.301029995663981)
	return int(math.Floor(d))
}

// pow5Bits is about ceil(log2(5^n)): Java's table for n < 27, 3n beyond.
func pow5Bits(n int) int {
	if n < 27 {
		return int(math.Ceil(float64(n) * math.Log2(5)))
	}
	return n * 3
}

// pow5 is 5^n for the n the 32- and 64-bit variants use (n < 28).
func pow5(n int) uint64 {
	v := uint64(1)
	for range n {
		v *= 5
	}
	return v
}

func sign64(v int64) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// javaFloatString formats f (a float64, or a float32 widened when bits is
// 32) as Java 17's Double.toString or Float.toString.
func javaFloatString(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	var d fdDigits
	if bitSize == 32 {
		d = float32Digits(float32(f))
	} else {
		d = float64Digits(f)
	}
	var sb strings.Builder
	if f < 0 {
		sb.WriteByte('-')
	}
	d.format(&sb)
	return sb.String()
}

func float64Digits(f float64) fdDigits {
	raw := math.Float64bits(f)
	fract := raw & (1<<52 - 1)
	exp := int(raw >> 52 & 0x7ff)
	nSig := 53
	if exp == 0 { // subnormal: normalise, counting its real precision
		lz := bits.LeadingZeros64(fract)
		shift := lz - 11
		fract <<= uint(shift)
		exp = 1 - shift
		nSig = 64 - lz
	} else {
		fract |= 1 << 52
	}
	return javaFloatDigits(fract, exp-1023, nSig)
}

func float32Digits(f float32) fdDigits {
	raw := math.Float32bits(f)
	fract := raw & (1<<23 - 1)
	exp := int(raw >> 23 & 0xff)
	nSig := 24
	if exp == 0 {
		lz := bits.LeadingZeros32(fract)
		shift := lz - 8
		fract <<= uint(shift)
		exp = 1 - shift
		nSig = 32 - lz
	} else {
		fract |= 1 << 23
	}
	return javaFloatDigits(uint64(fract)<<(52-23), exp-127, nSig)
}

// format writes the digits as Java does: plain with at least one fraction
// digit for 10^-3 <= |v| < 10^7, else d.dddE<n>.
func (d fdDigits) format(sb *strings.Builder) {
	n := len(d.digits)
	switch {
	case d.exp > 0 && d.exp < 8:
		if n <= d.exp {
			sb.Write(d.digits)
			sb.WriteString(strings.Repeat("0", d.exp-n))
			sb.WriteString(".0")
			return
		}
		sb.Write(d.digits[:d.exp])
		sb.WriteByte('.')
		sb.Write(d.digits[d.exp:])
	case d.exp <= 0 && d.exp > -3:
		sb.WriteString("0.")
		sb.WriteString(strings.Repeat("0", -d.exp))
		sb.Write(d.digits)
	default:
		sb.WriteByte(d.digits[0])
		sb.WriteByte('.')
		if n > 1 {
			sb.Write(d.digits[1:])
		} else {
			sb.WriteByte('0')
		}
		sb.WriteByte('E')
		sb.WriteString(strconv.Itoa(d.exp - 1))
	}
}
