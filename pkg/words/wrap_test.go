package words

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	cases := map[string]struct {
		prefix  string
		items   []string
		visible []int
		width   int
		want    []string
	}{
		"continuation lines under the first item": {
			prefix: "Batch 3:", items: []string{"spoke-1", "spoke-2", "spoke-3", "spoke-4"}, width: 25,
			want: []string{"Batch 3: spoke-1 spoke-2", "         spoke-3 spoke-4"},
		},
		"an item longer than the line has it to itself": {
			prefix: "B:", items: []string{"a-very-long-name", "b"}, width: 5,
			want: []string{"B: a-very-long-name", "   b"},
		},
		"visible widths leave colour escapes out": {
			prefix: "B:", items: []string{"\x1b[32mok\x1b[0m", "\x1b[32mok\x1b[0m"}, visible: []int{2, 2}, width: 8,
			want: []string{"B: \x1b[32mok\x1b[0m \x1b[32mok\x1b[0m"},
		},
		"no items": {prefix: "B:", width: 10, want: []string{"B: "}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Wrap(tc.prefix, tc.items, tc.visible, tc.width)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("Wrap =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
