package values

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/connect/javatext"
)

// decimal is an exact decimal number, unscaled × 10^-scale, as Java's
// BigDecimal holds one: the scale is part of the value (1.50 is not 1.5).
type decimal struct {
	unscaled *big.Int
	scale    int32
}

var bigTen = big.NewInt(10)

// parseDecimal reads a decimal in plain or exponent notation (what
// PostgreSQL prints for numeric and money, and Java's BigDecimal(String)
// accepts).
func parseDecimal(s string) (decimal, error) {
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil {
			return decimal{}, fmt.Errorf("not a decimal number: %q", s)
		}
		mant, exp = s[:i], e
	}
	digits, frac, _ := strings.Cut(mant, ".")
	neg := false
	if digits != "" && (digits[0] == '-' || digits[0] == '+') {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	all := digits + frac
	if all == "" || !allDigits(all) {
		return decimal{}, fmt.Errorf("not a decimal number: %q", s)
	}
	var u *big.Int
	if len(all) <= 18 {
		// The common case fits an int64: skip big.Int's general parser.
		n, _ := strconv.ParseInt(all, 10, 64)
		u = big.NewInt(n)
	} else {
		u, _ = new(big.Int).SetString(all, 10)
	}
	if neg {
		u.Neg(u)
	}
	scale := int64(len(frac)) - exp
	if scale != int64(int32(scale)) {
		return decimal{}, fmt.Errorf("decimal scale out of range: %q", s)
	}
	return decimal{unscaled: u, scale: int32(scale)}, nil
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// withScale returns d at scale n, multiplying or, when n is smaller,
// dividing with the rounding Java's RoundingMode.HALF_UP does (half away from
// zero); exact reports whether no digit was dropped.
func (d decimal) withScale(n int32) (out decimal, exact bool) {
	if n == d.scale {
		return d, true
	}
	if n > d.scale {
		f := new(big.Int).Exp(bigTen, big.NewInt(int64(n-d.scale)), nil)
		return decimal{unscaled: f.Mul(f, d.unscaled), scale: n}, true
	}
	f := new(big.Int).Exp(bigTen, big.NewInt(int64(d.scale-n)), nil)
	q, r := new(big.Int).QuoRem(d.unscaled, f, new(big.Int))
	if r.Sign() == 0 {
		return decimal{unscaled: q, scale: n}, true
	}
	twice := new(big.Int).Abs(r)
	twice.Lsh(twice, 1)
	if twice.Cmp(f) >= 0 {
		if d.unscaled.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return decimal{unscaled: q, scale: n}, false
}

// stripTrailingZeros drops trailing zeros of the unscaled value, as
// BigDecimal.stripTrailingZeros does (zero becomes 0 at scale 0).
func (d decimal) stripTrailingZeros() decimal {
	if d.unscaled.Sign() == 0 {
		return decimal{unscaled: new(big.Int), scale: 0}
	}
	u, s := new(big.Int).Set(d.unscaled), d.scale
	r := new(big.Int)
	for {
		q, m := new(big.Int).QuoRem(u, bigTen, r)
		if m.Sign() != 0 {
			break
		}
		u, s = q, s-1
	}
	return decimal{unscaled: u, scale: s}
}

// plainString is BigDecimal.toPlainString: no exponent, the scale's digits
// after the point.
func (d decimal) plainString() string {
	abs := new(big.Int).Abs(d.unscaled).String()
	sign := ""
	if d.unscaled.Sign() < 0 {
		sign = "-"
	}
	switch {
	case d.scale <= 0:
		if d.unscaled.Sign() == 0 {
			abs = "0"
			if d.scale < 0 {
				return "0"
			}
		}
		return sign + abs + strings.Repeat("0", int(-d.scale))
	case int(d.scale) >= len(abs):
		return sign + "0." + strings.Repeat("0", int(d.scale)-len(abs)) + abs
	default:
		i := len(abs) - int(d.scale)
		return sign + abs[:i] + "." + abs[i:]
	}
}

// float64 is BigDecimal.doubleValue: the nearest double.
func (d decimal) float64() float64 {
	f, _ := strconv.ParseFloat(d.unscaled.String()+"e"+strconv.Itoa(int(-d.scale)), 64)
	return f
}

// unscaledBytes is BigInteger.toByteArray of the unscaled value: the
// shortest big-endian two's complement form, as Connect's Decimal and
// Debezium's VariableScaleDecimal carry it.
func (d decimal) unscaledBytes() []byte {
	return javatext.BigIntegerBytes(d.unscaled)
}
