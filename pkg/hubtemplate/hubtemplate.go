// Package hubtemplate decides whether the ACM hub templates of a policy still work once Copy
// mode has copied the policy into another namespace, and which ConfigMaps have to follow it.
//
// The governance policy propagator resolves hub templates ({{hub ... hub}}) on the hub, with
// reads restricted to the root policy's own namespace. A copy lives in another namespace, so
// every read of the original namespace has to be carried over: ConfigMaps read by literal
// name can be copied next to the policy (Analysis.ConfigMaps), an explicit reference to the
// original namespace can be pointed at the copy's (Rewrite), and everything else makes the
// copy unworkable (Analysis.Unsupported).
//
// The propagator turns a policy template into YAML and parses the whole text as one Go
// template, so templates may span several string values. This package does the same with
// the string values that hold a hub template, in document order, one per line.
package hubtemplate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/template/parse"
)

// The hub template delimiters of the propagator; Go templates add the trim forms "{{hub- "
// and " -hub}}" by themselves.
const (
	startDelim = "{{hub"
	stopDelim  = "hub}}"
)

// treeName is the name the propagator's template library gives the template it parses; a
// {{hub define "tmpl" hub}} clashes with it there as here.
const treeName = "tmpl"

// maxExpression is the length beyond which a quoted expression is cut.
const maxExpression = 120

// Analysis is what copying a policy needs to know about its hub templates.
type Analysis struct {
	// ConfigMaps are the ConfigMaps of the policy's namespace that hub templates read by
	// literal name (fromConfigMap, copyConfigMapData, lookup of a v1 ConfigMap), sorted and
	// without duplicates: the caller copies them into the copy's namespace. It is empty when
	// Unsupported is set.
	ConfigMaps []string
	// Unsupported, when not empty, says why the copy cannot work: the policy template index,
	// the first offending hub template as written (for a parse error, the string value that
	// holds it), and the reason, e.g.
	// `policy-templates[0]: {{hub fromSecret "" "creds" "pw" hub}} reads a Secret; Copy mode
	// does not copy Secrets (use enforcement: Override)`.
	Unsupported string
}

// Analyze reads the hub templates of a policy's templates (the raw JSON of each
// spec.policy-templates[].objectDefinition, in order) for a copy of a policy of
// policyNamespace. It reports the first problem in template order; templates without hub
// templates, and spoke templates ({{ ... }}), are not its concern.
func Analyze(policyNamespace string, templates [][]byte) Analysis {
	var configMaps []string
	for i, raw := range templates {
		found, problem := analyzeTemplate(policyNamespace, raw)
		if problem != "" {
			return Analysis{Unsupported: fmt.Sprintf("policy-templates[%d]: %s", i, problem)}
		}
		configMaps = append(configMaps, found...)
	}
	slices.Sort(configMaps)
	return Analysis{ConfigMaps: slices.Compact(configMaps)}
}

// Rewrite returns raw with every literal namespace argument equal to from, in the functions
// that read objects (fromConfigMap, fromSecret, copyConfigMapData, copySecretData, lookup),
// replaced by to, so that an explicit reference to the policy's namespace points at the
// copy's. The empty namespace (the policy's own) and everything else are left as they are,
// and so is the layout of the JSON: only the string values holding a rewritten template are
// re-encoded. Raw is returned unchanged (the same bytes) when there is nothing to rewrite: no
// hub templates, no such argument, an empty from, templates that do not parse or raw that is
// not JSON (Analyze reports those). Raw itself is never modified.
func Rewrite(raw []byte, from, to string) []byte {
	if from == "" || from == to || !bytes.Contains(raw, []byte(startDelim)) {
		return raw
	}
	doc, err := scan(raw)
	if err != nil {
		return raw
	}
	calls, err := doc.calls()
	if err != nil {
		return raw
	}
	var edits []edit
	for _, c := range calls {
		if ns, ok := c.namespace(); ok && ns.Text == from {
			edits = append(edits, edit{pos: int(ns.Pos), end: int(ns.Pos) + len(ns.Quoted), text: strconv.Quote(to)})
		}
	}
	if len(edits) == 0 {
		return raw
	}
	return doc.apply(raw, edits)
}

// analyzeTemplate returns the ConfigMaps the hub templates of one policy template read, or
// the first problem with them.
func analyzeTemplate(policyNamespace string, raw []byte) (configMaps []string, problem string) {
	if !bytes.Contains(raw, []byte(startDelim)) {
		// The propagator leaves such templates alone, whatever escapes they hold.
		return nil, ""
	}
	doc, err := scan(raw)
	if err != nil {
		return nil, fmt.Sprintf("holds hub templates but is not valid JSON: %v", err)
	}
	calls, err := doc.calls()
	if err != nil {
		return nil, doc.parseProblem(err)
	}
	for _, c := range calls {
		name, why := judge(policyNamespace, c)
		if why != "" {
			return nil, doc.expression(int(c.fn.Pos)) + " " + why
		}
		if name != "" {
			configMaps = append(configMaps, name)
		}
	}
	return configMaps, ""
}

// document is the text of the hub templates of one policy template: the decoded JSON
// strings (keys and values) that hold a hub template, in document order, joined by newlines.
type document struct {
	text    string
	strings []jsonString
}

// jsonString is one string of a document: where its token lies in the raw JSON (quotes
// included) and where its decoded value starts in the document text.
type jsonString struct {
	start, end int
	offset     int
	value      string
}

// scan decodes raw and gathers the strings that hold a hub template.
func scan(raw []byte) (*document, error) {
	// The decoder's tokens stop at the end of the input without a word about what is left
	// open, and go on past the first value; check the whole first.
	var whole json.RawMessage
	if err := json.Unmarshal(raw, &whole); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	doc := &document{}
	var text strings.Builder
	for {
		before := int(dec.InputOffset())
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		s, ok := tok.(string)
		if !ok || !strings.Contains(s, startDelim) {
			continue
		}
		if text.Len() > 0 {
			text.WriteByte('\n')
		}
		// Only white space, ',' and ':' separate a token from the one before it.
		start := before + bytes.IndexByte(raw[before:], '"')
		doc.strings = append(doc.strings, jsonString{start: start, end: int(dec.InputOffset()), offset: text.Len(), value: s})
		text.WriteString(s)
	}
	doc.text = text.String()
	return doc, nil
}

// calls parses the document and returns every function call in it, in text order.
func (d *document) calls() ([]call, error) {
	tree := parse.New(treeName)
	// Unknown functions are reported by judge, with the expression that calls them.
	tree.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := tree.Parse(d.text, startDelim, stopDelim, trees); err != nil {
		return nil, err
	}
	var w walker
	for _, t := range trees {
		w.node(t.Root)
	}
	slices.SortFunc(w.calls, func(a, b call) int { return cmp.Compare(a.fn.Pos, b.fn.Pos) })
	return w.calls, nil
}

// parseProblem describes a parse error: the string value it lies in and the parser's
// message, with the line counted within that value when the value has several lines.
func (d *document) parseProblem(err error) string {
	msg := err.Error()
	prefix := "template: " + treeName + ":"
	rest, found := strings.CutPrefix(msg, prefix)
	lineText, detail, hasLine := strings.Cut(rest, ": ")
	line, convErr := strconv.Atoi(lineText)
	if !found || !hasLine || convErr != nil || len(d.strings) == 0 {
		return fmt.Sprintf("%s cannot be parsed: %s", d.expression(0), msg)
	}
	// Each string starts a new line of the text; find the one holding the line.
	first := 1
	for i, s := range d.strings {
		lines := strings.Count(s.value, "\n") + 1
		if line < first+lines || i == len(d.strings)-1 {
			where := ""
			if lines > 1 {
				where = fmt.Sprintf("line %d: ", line-first+1)
			}
			return fmt.Sprintf("%s cannot be parsed: %s%s", quote(s.value), where, detail)
		}
		first += lines
	}
	return "" // not reached: the loop returns at the last string
}

// expression returns the hub template action around pos in the document text, as written,
// for a message.
func (d *document) expression(pos int) string {
	pos = min(max(pos, 0), len(d.text))
	start := strings.LastIndex(d.text[:pos], startDelim)
	if start < 0 {
		start = max(strings.Index(d.text, startDelim), 0)
	}
	return quote(d.text[start:actionEnd(d.text, start+len(startDelim))])
}

// actionEnd returns where the action starting at from ends: past the first stop delimiter
// outside quoted strings and character constants, or the end of the text.
func actionEnd(text string, from int) int {
	for i := from; i < len(text); i++ {
		switch c := text[i]; {
		case c == '"' || c == '\'':
			i = closingQuote(text, i)
		case c == '`':
			j := strings.IndexByte(text[i+1:], '`')
			if j < 0 {
				return len(text)
			}
			i += j + 1
		case strings.HasPrefix(text[i:], stopDelim):
			return i + len(stopDelim)
		}
	}
	return len(text)
}

// closingQuote returns the index of the quote closing the one at open, skipping escapes, or
// the end of the text.
func closingQuote(text string, open int) int {
	for i := open + 1; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case text[open]:
			return i
		}
	}
	return len(text)
}

// quote makes s fit in a message: runs of white space become one space and anything beyond
// maxExpression characters is cut and marked with "...".
func quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxExpression {
		return string(r[:maxExpression-3]) + "..."
	}
	return s
}

// edit replaces text[pos:end] of a document with text.
type edit struct {
	pos, end int
	text     string
}

// apply returns raw with the edits (positions in the document text) made to the string
// values they fall in, each changed value re-encoded in place.
func (d *document) apply(raw []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return cmp.Compare(a.pos, b.pos) })
	var out bytes.Buffer
	done := 0
	for _, s := range d.strings {
		value, changed := s.value, false
		// An edited literal is a namespace, which holds no newline, so it lies within one
		// string.
		for i := len(edits) - 1; i >= 0; i-- {
			e := edits[i]
			if e.pos >= s.offset && e.end <= s.offset+len(s.value) {
				value = value[:e.pos-s.offset] + e.text + value[e.end-s.offset:]
				changed = true
			}
		}
		if !changed {
			continue
		}
		out.Write(raw[done:s.start])
		out.Write(encodeString(value))
		done = s.end
	}
	out.Write(raw[done:])
	return out.Bytes()
}

// encodeString returns s as a JSON string, leaving <, > and & as they are.
func encodeString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// call is one call of a template function: the identifier and the arguments it receives, a
// nil argument being the value piped in from the command before.
type call struct {
	fn   *parse.IdentifierNode
	args []parse.Node
}

// namespace returns the namespace argument of a call of a function that reads objects, when
// it is a literal string.
func (c call) namespace() (*parse.StringNode, bool) {
	f := functions[c.fn.Ident]
	if f.reads == readsNothing || f.namespaceArg >= len(c.args) {
		return nil, false
	}
	ns, ok := c.args[f.namespaceArg].(*parse.StringNode)
	return ns, ok
}

// walker gathers the function calls of parse trees.
type walker struct {
	calls []call
}

func (w *walker) node(n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n != nil {
			for _, c := range n.Nodes {
				w.node(c)
			}
		}
	case *parse.ActionNode:
		w.pipe(n.Pipe)
	case *parse.IfNode:
		w.branch(&n.BranchNode)
	case *parse.RangeNode:
		w.branch(&n.BranchNode)
	case *parse.WithNode:
		w.branch(&n.BranchNode)
	case *parse.TemplateNode:
		w.pipe(n.Pipe)
	case *parse.PipeNode:
		w.pipe(n)
	case *parse.ChainNode:
		w.node(n.Node)
	case *parse.IdentifierNode:
		// A function named as an argument is called without arguments.
		w.calls = append(w.calls, call{fn: n})
	}
}

func (w *walker) branch(b *parse.BranchNode) {
	w.pipe(b.Pipe)
	w.node(b.List)
	w.node(b.ElseList)
}

func (w *walker) pipe(p *parse.PipeNode) {
	if p == nil {
		return
	}
	for i, cmd := range p.Cmds {
		w.command(cmd, i > 0)
	}
}

func (w *walker) command(cmd *parse.CommandNode, piped bool) {
	args := cmd.Args
	if len(args) > 0 {
		if fn, ok := args[0].(*parse.IdentifierNode); ok {
			c := call{fn: fn, args: slices.Clone(args[1:])}
			if piped {
				c.args = append(c.args, nil)
			}
			w.calls = append(w.calls, c)
			args = args[1:]
		}
	}
	for _, a := range args {
		w.node(a)
	}
}

// literal returns the value of a literal string argument.
func literal(n parse.Node) (string, bool) {
	s, ok := n.(*parse.StringNode)
	if !ok {
		return "", false
	}
	return s.Text, true
}

// reads says what of the policy's namespace a template function reads.
type reads int

const (
	// readsNothing: the function depends on nothing in the policy's namespace. Functions
	// reading cluster-scoped objects (fromClusterClaim, getNodesWithExactRoles...) behave
	// the same in any namespace.
	readsNothing reads = iota
	// readsConfigMap: the function reads one ConfigMap of the policy's namespace.
	readsConfigMap
	// readsSecret: the function reads one Secret of the policy's namespace.
	readsSecret
	// readsObjects: the function reads objects of any kind (lookup).
	readsObjects
)

// function describes a hub template function.
type function struct {
	reads reads
	// The parameters of a function that reads objects, of which namespaceArg is the
	// namespace; variadic when the last one may repeat or be left out.
	params       []string
	namespaceArg int
	variadic     bool
}

// functions are the functions of ACM hub templates: those of the propagator's template
// library (github.com/stolostron/go-template-utils v7), which adds every Sprig function but
// env and expandenv, and the builtins of Go templates.
var functions = func() map[string]function {
	independent := strings.Fields(`
		and call html index slice js len not or print printf println urlquery eq ge gt le lt ne

		fromClusterClaim lookupClusterClaim getNodesWithExactRoles hasNodesWithExactRoles
		base64enc base64dec autoindent indent atoi toInt toBool toLiteral protect
		fromJSON mustFromJSON toJSON mustToJSON toRawJSON mustToRawJSON fromYAML toYAML fromYaml toYaml

		abbrev abbrevboth add add1 add1f addf adler32sum ago all any append atoi b32dec b32enc
		b64dec b64enc base bcrypt biggest buildCustomCert camelcase cat ceil chunk clean coalesce
		compact concat contains date dateInZone dateModify date_in_zone date_modify decryptAES
		deepCopy deepEqual default derivePassword dict dig dir div divf duration durationRound
		empty encryptAES ext fail first float64 floor fromJson genCA genCAWithKey genPrivateKey
		genSelfSignedCert genSelfSignedCertWithKey genSignedCert genSignedCertWithKey get
		getHostByName has hasKey hasPrefix hasSuffix hello htmlDate htmlDateInZone htpasswd
		initial initials int int64 isAbs join kebabcase keys kindIs kindOf last list lower max
		maxf merge mergeOverwrite min minf mod mul mulf mustAppend mustChunk mustCompact
		mustDateModify mustDeepCopy mustFirst mustFromJson mustHas mustInitial mustLast mustMerge
		mustMergeOverwrite mustPrepend mustRegexFind mustRegexFindAll mustRegexMatch
		mustRegexReplaceAll mustRegexReplaceAllLiteral mustRegexSplit mustRest mustReverse
		mustSlice mustToDate mustToJson mustToPrettyJson mustToRawJson mustUniq mustWithout
		must_date_modify nindent nospace now omit osBase osClean osDir osExt osIsAbs pick pluck
		plural prepend quote randAlpha randAlphaNum randAscii randBytes randInt randNumeric
		regexFind regexFindAll regexMatch regexQuoteMeta regexReplaceAll regexReplaceAllLiteral
		regexSplit repeat replace rest reverse round semver semverCompare seq set sha1sum
		sha256sum sha512sum shuffle slice snakecase sortAlpha split splitList splitn squote sub
		subf substr swapcase ternary title toDate toDecimal toJson toPrettyJson toRawJson
		toString toStrings trim trimAll trimPrefix trimSuffix trimall trunc tuple typeIs
		typeIsLike typeOf uniq unixEpoch unset until untilStep untitle upper urlJoin urlParse
		uuidv4 values without wrap wrapWith`)
	m := map[string]function{
		"fromConfigMap":     {reads: readsConfigMap, params: []string{"namespace", "name", "key"}},
		"copyConfigMapData": {reads: readsConfigMap, params: []string{"namespace", "name"}},
		"fromSecret":        {reads: readsSecret, params: []string{"namespace", "name", "key"}},
		"copySecretData":    {reads: readsSecret, params: []string{"namespace", "name"}},
		"lookup": {
			reads: readsObjects, params: []string{"apiVersion", "kind", "namespace", "name", "labelSelector"},
			namespaceArg: 2, variadic: true,
		},
	}
	for _, name := range independent {
		m[name] = function{}
	}
	return m
}()

// managedClusterGroup is the API group of ManagedClusters. The propagator lets hub
// templates look up the ManagedCluster of the cluster a policy is resolved for, whatever the
// policy's namespace.
const managedClusterGroup = "cluster.open-cluster-management.io"

// judge returns the ConfigMap a call reads from the policy's namespace, or why a copy of the
// policy cannot make the call work.
func judge(policyNamespace string, c call) (configMap, why string) {
	f, known := functions[c.fn.Ident]
	switch {
	case !known:
		return "", fmt.Sprintf("calls %s, which is not an ACM hub template function", c.fn.Ident)
	case f.reads == readsNothing:
		return "", ""
	case f.reads == readsSecret:
		return "", "reads a Secret; Copy mode does not copy Secrets (use enforcement: Override)"
	}
	if why := arity(c.fn.Ident, f, len(c.args)); why != "" {
		return "", why
	}
	if why := namespaceProblem(policyNamespace, c.args[f.namespaceArg]); why != "" {
		return "", why
	}
	if f.reads == readsObjects {
		return judgeLookup(c.args)
	}
	return configMapName(c.args[1])
}

// arity says what is wrong with giving n arguments to a function that reads objects.
func arity(name string, f function, n int) string {
	want := len(f.params)
	if f.variadic {
		want--
	}
	if n == want || (f.variadic && n > want) {
		return ""
	}
	params := strings.Join(f.params[:want], ", ")
	if f.variadic {
		params += ", " + f.params[want] + "..."
	}
	return fmt.Sprintf("gives %s %d arguments; it takes (%s)", name, n, params)
}

// namespaceProblem says what is wrong with the namespace argument of a function that reads
// objects: a copy can only read the policy's namespace, named "" or literally (Rewrite).
func namespaceProblem(policyNamespace string, arg parse.Node) string {
	ns, ok := literal(arg)
	switch {
	case !ok:
		return "computes the namespace it reads, so Copy mode cannot tell whether it is the policy's " +
			"(use enforcement: Override)"
	case ns != "" && ns != policyNamespace:
		return fmt.Sprintf("reads namespace %q; the propagator lets hub templates read only the policy's namespace %q, "+
			"so it refuses this template with or without a copy", ns, policyNamespace)
	}
	return ""
}

// configMapName returns the name of a ConfigMap read by literal name.
func configMapName(arg parse.Node) (configMap, why string) {
	name, ok := literal(arg)
	switch {
	case !ok:
		return "", "computes the ConfigMap name, which may differ per cluster and cannot be known before the rollout; " +
			"Copy mode copies only ConfigMaps named literally (use enforcement: Override)"
	case name == "":
		return "", "reads a ConfigMap without naming it"
	}
	return name, ""
}

// judgeLookup judges a lookup, whose namespace is already known to be the policy's: the
// lookup of a ConfigMap by literal name works like fromConfigMap, that of a ManagedCluster
// works from any namespace, and anything else reads objects a copy does not have.
func judgeLookup(args []parse.Node) (configMap, why string) {
	apiVersion, okVersion := literal(args[0])
	kind, okKind := literal(args[1])
	group, _, _ := strings.Cut(apiVersion, "/")
	switch {
	case okVersion && okKind && apiVersion == "v1" && kind == "ConfigMap":
		if name, ok := literal(args[3]); ok && name == "" {
			return "", "lists the ConfigMaps of the policy's namespace; Copy mode copies only ConfigMaps named literally " +
				"(use enforcement: Override)"
		}
		return configMapName(args[3])
	case okVersion && okKind && kind == "ManagedCluster" && group == managedClusterGroup:
		return "", ""
	}
	return "", "uses lookup, which reads arbitrary objects of the policy's namespace; Copy mode copies only ConfigMaps " +
		"named literally (use enforcement: Override)"
}
