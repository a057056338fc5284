package javatext

import (
	"fmt"
	"math/big"
)

// BigIntegerBytes is Java's BigInteger.toByteArray: the shortest big-endian
// two's complement form of v, as Connect's Decimal carries its unscaled
// value.
func BigIntegerBytes(v *big.Int) []byte {
	if v.Sign() >= 0 {
		b := v.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -v - 1 has the complement's bits inverted.
	m := new(big.Int).Neg(v)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xFF}, b...)
	}
	return b
}

// DecimalBytes reads a decimal number's text (12.5, -3, 1E+3) as a Decimal
// of the given scale: its unscaled value's bytes. A number with more
// fraction digits than the scale holds is an error: rounding it would
// change the value.
func DecimalBytes(text string, scale int32) ([]byte, error) {
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return nil, fmt.Errorf("%q is not a decimal number", text)
	}
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(scale))), nil)
	if scale >= 0 {
		r.Mul(r, new(big.Rat).SetInt(pow))
	} else {
		r.Quo(r, new(big.Rat).SetInt(pow))
	}
	if !r.IsInt() {
		return nil, fmt.Errorf("%s has more digits than a Decimal of scale %d holds", text, scale)
	}
	return BigIntegerBytes(r.Num()), nil
}

func abs32(n int32) int64 {
	if n < 0 {
		return -int64(n)
	}
	return int64(n)
}
