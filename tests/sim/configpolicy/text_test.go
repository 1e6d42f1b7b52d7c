package configpolicy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/onsi/gomega"
)

func TestScalarTextMatchesFmt(t *testing.T) {
	cases := map[string]any{
		"string": "x", "empty": "", "int64": int64(-42), "int": 7, "true": true, "false": false, "nil": nil,
		"float": 0.1, "whole float": float64(3), "large float": 1e21, "small float": 1e-7, "million": 1e6,
		"negative zero": math.Copysign(0, -1),
	}

	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(scalarText(v)).To(Equal(fmt.Sprint(v)))
		})
	}
}

// TestTextMatchesFmt checks the text helpers against fmt on random JSON values, including values
// fmt prints alike although they differ, such as [""] and [].
func TestTextMatchesFmt(t *testing.T) {
	g := NewWithT(t)
	gen := valueGen{r: rand.New(rand.NewPCG(1, 2))}

	values := []any{[]any{""}, []any{}, []any{"", "x"}, []any{" x"}, map[string]any{"a": ""}, map[string]any{}}
	for range 2000 {
		values = append(values, gen.value(0))
	}

	for i, a := range values {
		g.Expect(string(appendText(nil, a))).To(Equal(fmt.Sprint(a)))

		b := values[(i*7+3)%len(values)]
		g.Expect(textEqual(a, b)).To(Equal(fmt.Sprint(a) == fmt.Sprint(b)), "%#v and %#v", a, b)
		g.Expect(textEqual(a, a)).To(BeTrue())
	}

	g.Expect(textEqual([]any{""}, []any{})).To(BeTrue())
	g.Expect(textEqual([]any{"", "x"}, []any{" x"})).To(BeTrue())
	g.Expect(textEqual("1", int64(1))).To(BeTrue())
}

func TestSortKey(t *testing.T) {
	cases := map[string]struct {
		value any
		want  string
	}{
		"scalar":      {value: int64(3), want: "3"},
		"nested list": {value: []any{"b", []any{"z", "a"}, "a"}, want: "[[a z] a b]"},
		"map":         {value: map[string]any{"b": []any{"y", "x"}, "a": int64(1)}, want: "map[a:1 b:[x y]]"},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(sortKey(tc.value)).To(Equal(tc.want))
		})
	}
}
