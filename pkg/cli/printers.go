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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// Output formats of -o/--output: the commands' own text (table, the default), JSON and
// YAML as the commands write them, and kubectl's printers (k8s.io/cli-runtime) for name,
// jsonpath=, jsonpath-file=, go-template= and go-template-file=.
const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
	outputName  = "name"
)

// outputHelp is the help of -o of a command that prints API objects, documentOutputHelp of
// one that prints a document of its own (a plan): -o name is for objects only.
const (
	outputHelp         = "Output format: table, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE"
	documentOutputHelp = "Output format: table, json, yaml, jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE"
)

// checkOutput refuses, before the command reads the hub, an -o value no printer takes or a
// template that does not parse.
func checkOutput(format string) error {
	_, err := kubectlPrinter(format)
	return err
}

// checkDocumentOutput is checkOutput for a command that prints a document of its own, what
// it is ("a plan"), not API objects: it refuses -o name too.
func checkDocumentOutput(format, what string) error {
	if format == outputName {
		return nameOfNoObject(what)
	}
	return checkOutput(format)
}

func nameOfNoObject(what string) error {
	return usageError("-o name writes the kind and name of API objects, and this command prints %s: "+
		"use json, yaml, jsonpath=TEMPLATE or go-template=TEMPLATE", what)
}

// kubectlPrinter returns kubectl's printer of an -o format the commands do not write
// themselves; nil for table, json and yaml.
func kubectlPrinter(format string) (printers.ResourcePrinter, error) {
	switch format {
	case outputTable, outputJSON, outputYAML:
		return nil, nil
	}
	flags := genericclioptions.PrintFlags{OutputFormat: &format,
		NamePrintFlags: genericclioptions.NewNamePrintFlags(""), TemplatePrinterFlags: genericclioptions.NewKubeTemplatePrintFlags()}
	p, err := flags.ToPrinter()
	switch {
	case genericclioptions.IsNoCompatiblePrinterError(err):
		return nil, usageError("unknown output format %q: use table, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, "+
			"go-template=TEMPLATE or go-template-file=FILE", format)
	case err != nil:
		kind, _, _ := strings.Cut(format, "=")
		return nil, usageError("-o %s: %w", kind, err)
	}
	return p, nil
}

// printData writes v in an -o format other than table: an API object (its apiVersion and
// kind set), an objectList of them, or a document of a command's own that is no object (a
// plan). JSON and YAML are written as the commands always wrote them; the other formats by
// kubectl's printers, a document read as the JSON it prints as.
func printData(w io.Writer, format string, v any) error {
	var out []byte
	var err error
	switch format {
	case outputJSON:
		out, err = json.MarshalIndent(v, "", "    ")
		out = append(out, '\n')
	case outputYAML:
		out, err = yaml.Marshal(v)
	default:
		return printWithKubectl(w, format, v)
	}
	if err != nil {
		return fmt.Errorf("encoding the output: %w", err)
	}
	_, err = w.Write(out)
	return err
}

func printWithKubectl(w io.Writer, format string, v any) error {
	p, err := kubectlPrinter(format)
	if err != nil {
		return err
	}
	obj, isObject, err := printedObject(v)
	if err != nil {
		return err
	}
	if format == outputName && !isObject {
		return nameOfNoObject("no API object")
	}
	return p.PrintObj(obj, w)
}

// printedObject returns v as kubectl's printers take it: an object that says its kind as
// it is; an objectList as a List of unstructured objects; anything else as the unstructured
// content of its JSON, then isObject is false.
func printedObject(v any) (obj runtime.Object, isObject bool, err error) {
	if o, ok := v.(runtime.Object); ok && !o.GetObjectKind().GroupVersionKind().Empty() {
		return o, true, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, false, fmt.Errorf("encoding the output: %w", err)
	}
	var content map[string]any
	if err := utiljson.Unmarshal(data, &content); err != nil { // numbers as int64 where whole
		return nil, false, fmt.Errorf("encoding the output: %w", err)
	}
	if _, ok := v.(objectList); ok {
		list := &unstructured.UnstructuredList{}
		list.SetUnstructuredContent(content)
		return list, true, nil
	}
	return &unstructured.Unstructured{Object: content}, false, nil
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

// wrapWords lays the words of text out after prefix on lines of at most width characters
// (words.Wrap), without trailing spaces.
func wrapWords(prefix, text string, width int) []string {
	lines := words.Wrap(prefix, strings.Split(text, " "), nil, width)
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return lines
}

// ago says how long before now t was: "4m ago", "in 2m" for a time to come.
func ago(t, now time.Time) string {
	if t.After(now) {
		return "in " + words.Duration(t.Sub(now))
	}
	return words.Duration(now.Sub(t)) + " ago"
}

// age is the time since t as kubectl get writes its AGE column (45s, 5m30s, 3h10m, 2d4h,
// 400d), "-" when t is unknown.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t))
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
