package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
	"sigs.k8s.io/yaml"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// Output formats of -o/--output.
const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// checkOutput refuses an unknown -o value.
func checkOutput(format string) error {
	switch format {
	case outputTable, outputJSON, outputYAML:
		return nil
	}
	return usageError("unknown output format %q: use table, json or yaml", format)
}

// printData writes v as indented JSON or as YAML.
func printData(w io.Writer, format string, v any) error {
	var out []byte
	var err error
	if format == outputYAML {
		out, err = yaml.Marshal(v)
	} else {
		out, err = json.MarshalIndent(v, "", "    ")
		out = append(out, '\n')
	}
	if err != nil {
		return fmt.Errorf("encoding the output: %w", err)
	}
	_, err = w.Write(out)
	return err
}

// Values of --color.
const (
	colorAuto   = "auto"
	colorAlways = "always"
	colorNever  = "never"
)

// checkColor refuses an unknown --color value.
func checkColor(mode string) error {
	if _, err := colorEnabled(mode, false, ""); err != nil {
		return usageError("%w", err)
	}
	return nil
}

// colorEnabled decides whether to colour: always, never, or (auto) when the output is a
// terminal and NO_COLOR is empty (https://no-color.org).
func colorEnabled(mode string, terminal bool, noColor string) (bool, error) {
	switch mode {
	case colorAlways:
		return true, nil
	case colorNever:
		return false, nil
	case colorAuto, "":
		return terminal && noColor == "", nil
	}
	return false, fmt.Errorf("unknown --color value %q: use auto, always or never", mode)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// defaultWidth is the width lists wrap at when the output is not a terminal.
const defaultWidth = 100

// width returns the width of the terminal w is, defaultWidth when it is none.
func width(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return defaultWidth
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil || cols < 20 {
		return defaultWidth
	}
	return cols
}

// ANSI colours of the states.
const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

// stateColor returns the colour of a rollout or cluster state, "" for none.
func stateColor(state string) string {
	switch state {
	case string(ranv1alpha1.StateCompleted), string(ranv1alpha1.AnalysisPassed):
		return ansiGreen
	case string(ranv1alpha1.StateNotCompleted), string(ranv1alpha1.ClusterInProgress), string(ranv1alpha1.AnalysisRunning):
		return ansiCyan
	case string(ranv1alpha1.StateTimedOut), string(ranv1alpha1.StateCannotStart), string(ranv1alpha1.ClusterHeld),
		string(ranv1alpha1.AnalysisInconclusive):
		return ansiYellow
	case string(ranv1alpha1.ClusterFailed):
		return ansiRed
	}
	return ""
}

// painter colours text, or leaves it alone when colour is off.
type painter struct{ on bool }

// state returns a state, coloured by stateColor.
func (p painter) state(state string) string {
	return p.paint(stateColor(state), state)
}

func (p painter) paint(color, text string) string {
	if !p.on || color == "" || text == "" {
		return text
	}
	return color + text + ansiReset
}

// table is a table of text cells; a cell's colour does not count in its width.
type table struct {
	header []string
	rows   [][]cell
}

type cell struct{ text, color string }

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

// plain is a cell without colour.
func plain(text string) cell { return cell{text: text} }

// stateCell is a cell holding a state, coloured by stateColor.
func stateCell(state string) cell { return cell{text: state, color: stateColor(state)} }

// write writes the table, each line after indent, columns two spaces apart, no trailing
// spaces.
func (t *table) write(w io.Writer, p painter, indent string) error {
	widths := make([]int, len(t.header))
	for i, h := range t.header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	header := make([]cell, len(t.header))
	for i, h := range t.header {
		header[i] = plain(h)
	}
	for _, r := range append([][]cell{header}, t.rows...) {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			b.WriteString(p.paint(c.color, c.text))
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text)+2))
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

// ago says how long before now t was: "4m ago", "in 2m" for a time to come.
func ago(t, now time.Time) string {
	if t.After(now) {
		return "in " + words.Duration(t.Sub(now))
	}
	return words.Duration(now.Sub(t)) + " ago"
}

// age is the time since t, "-" when t is unknown.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return words.Duration(now.Sub(t))
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
