package precache

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/blang/semver/v4"
	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/api/resource"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/policyobjects"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// Bounds of a PrecachingSpec. They are the limits of the ClusterGroupUpgrade's
// status.precaching.spec schema: Derive finds a spec over them invalid
// (PrecacheSpecIncomplete), and cuts the Spec it returns to them.
const (
	MaxPackagesAndChannels = 50
	MaxIndexes             = 10
	MaxAdditionalImages    = 20
	MaxExcludePatterns     = 20
	// MaxEntryLength bounds, in characters, an image reference (the platform image, an
	// index, an additional image).
	MaxEntryLength = 512
	// MaxShortEntryLength bounds a "package:channel" entry and an exclude pattern.
	MaxShortEntryLength = 128
	// MaxSpaceRequiredLength bounds spaceRequired, in its canonical form.
	MaxSpaceRequiredLength = 32
)

// WellFormedMessage is the message of a valid Result, TALM's.
const WellFormedMessage = "Precaching spec is valid and consistent"

// Kinds and group of the OLM objects whose policies say which operators to pre-cache.
const (
	kindSubscription  = "Subscription"
	kindCatalogSource = "CatalogSource"
	olmGroup          = "operators.coreos.com"
	// quoteLimit bounds, in characters, a value quoted in a message.
	quoteLimit = 100
)

// Input is what deriving the precache spec of a rollout needs.
type Input struct {
	// Policies are the managed root policies, in order; nil entries are skipped.
	Policies []*policyv1.Policy
	// Config is the spec of the referenced PreCachingConfig, nil without one.
	Config *ranv1alpha1.PreCachingConfigSpec
	// Graph returns the update graph of a channel, nil when unavailable. It is called only
	// to resolve a version to its release image when no policy names an image; it may be nil.
	Graph func(channel string) *updategraph.Graph
	// DefaultChannel is the ClusterVersion channel to use when no policy names one (for
	// example the channel most selected clusters use); it may be "".
	DefaultChannel string
}

// Result is the spec and the PrecacheSpecValid condition it gives. When Valid is false,
// Spec holds what could be derived, cut to the bounds so that it fits the status; it must
// not be sent to clusters.
type Result struct {
	Spec  ranv1alpha1.PrecachingSpec
	Valid bool
	// Reason is ReasonPrecacheSpecIsWellFormed, ReasonPrecacheSpecIncomplete or
	// ReasonInvalidPlatformImage.
	Reason string
	// Message is one sentence naming what is wrong (policy and field), or
	// WellFormedMessage.
	Message string
}

// Derive builds the precache spec of a rollout from its managed policies and PreCachingConfig:
//
//   - platformImage: overrides.platformImage; else the release image a policy's
//     ClusterVersion asks for (spec.desiredUpdate.image), else the payload of its version
//     (spec.desiredUpdate.version) in the update graph of, in turn, its channel, the other
//     channels the policies' ClusterVersions set, and DefaultChannel. Without a
//     ClusterVersion asking for a release there is none. It must be an image reference with
//     a registry and a tag or digest.
//   - operatorsPackagesAndChannels: overrides.operatorsPackagesAndChannels; else
//     "spec.name:spec.channel" of every operators.coreos.com Subscription of the policies
//     ("name:" for the default channel).
//   - operatorsIndexes: overrides.operatorsIndexes; else spec.image of every
//     operators.coreos.com CatalogSource of the policies that has one.
//   - spaceRequired: the PreCachingConfig's, a quantity above zero ("30Gi"; TALM's "30 GiB"
//     is read as 30Gi), written in canonical form; "" without one.
//   - excludePrecachePatterns, additionalImages: the PreCachingConfig's.
//
// Only musthave and mustonlyhave object templates of ConfigurationPolicies count, as
// upgradecheck.Targets reads them. Lists are trimmed, without empty entries or duplicates, in
// policy order.
//
// Problems are looked for in this order, and the first found decides the Result: a policy
// that cannot be read; the platform image (a template, two releases, no image found, not an
// image reference: InvalidPlatformImage); a template in, or a malformed entry of, the
// operators; spaceRequired; the bounds; index and additional images that are not image
// references; operators without an index; nothing to pre-cache. All but the platform image
// reference are PrecacheSpecIncomplete.
func Derive(in Input) Result {
	d := derivation{in: in}
	if in.Config != nil {
		d.cfg = *in.Config
	}
	content, p := readPolicies(in.Policies)
	d.fail(p)
	spec := ranv1alpha1.PrecachingSpec{
		PlatformImage:                d.platformImage(content.releases),
		OperatorsPackagesAndChannels: d.packages(content.operators),
		OperatorsIndexes:             d.indexes(content.operators),
		SpaceRequired:                d.spaceRequired(),
		ExcludePrecachePatterns:      clean(d.cfg.ExcludePrecachePatterns),
		AdditionalImages:             clean(d.cfg.AdditionalImages),
	}
	d.checkBounds(spec)
	d.checkReferences(spec)
	d.checkContent(spec)
	spec = fit(spec)
	if d.problem != nil {
		return Result{Spec: spec, Reason: d.problem.reason, Message: d.problem.message}
	}
	return Result{Spec: spec, Valid: true, Reason: ranv1alpha1.ReasonPrecacheSpecIsWellFormed, Message: WellFormedMessage}
}

// problem is why a spec is invalid: a PrecacheSpecValid=False reason and message.
type problem struct {
	reason, message string
}

func incomplete(format string, args ...any) *problem {
	return &problem{reason: ranv1alpha1.ReasonPrecacheSpecIncomplete, message: fmt.Sprintf(format, args...)}
}

// derivation carries the input and the first problem found.
type derivation struct {
	in      Input
	cfg     ranv1alpha1.PreCachingConfigSpec
	problem *problem
	// packagesFrom and indexesFrom say where the packages and the indexes came from, for
	// messages.
	packagesFrom, indexesFrom string
}

// fail records p unless a problem was found before.
func (d *derivation) fail(p *problem) {
	if d.problem == nil && p != nil {
		d.problem = p
	}
}

// platformImage returns the release image to pre-cache, "" when none is asked for.
func (d *derivation) platformImage(targets []upgradecheck.Target) string {
	if o := strings.TrimSpace(d.cfg.Overrides.PlatformImage); o != "" {
		d.fail(checkPlatformImage(o, "overrides.platformImage of the PreCachingConfig"))
		return o
	}
	var asked []upgradecheck.Target
	for _, t := range targets {
		switch {
		case t.Version != "" || t.Image != "":
			// A template in the other fields (the channel) does not hide the release.
			asked = append(asked, t)
		case t.Templated:
			d.fail(incomplete("Policy %s sets the ClusterVersion's release with a template, resolved only on the "+
				"clusters; set overrides.platformImage in the PreCachingConfig", t.Policy))
			return ""
		}
	}
	if len(asked) == 0 {
		return ""
	}
	if p := conflict(asked); p != nil {
		d.fail(p)
		return ""
	}
	for _, t := range asked {
		if t.Image != "" {
			d.fail(checkPlatformImage(t.Image, "spec.desiredUpdate.image of policy "+t.Policy))
			return t.Image
		}
	}
	image, p := d.resolve(asked[0], channels(asked[0], targets, d.in.DefaultChannel))
	d.fail(p)
	return image
}

// conflict returns a problem naming the first two targets that ask for different releases:
// different images, or different versions. An image and a version alone are not compared.
func conflict(asked []upgradecheck.Target) *problem {
	for i, a := range asked {
		for _, b := range asked[i+1:] {
			var x, y string
			switch {
			case a.Version != "" && b.Version != "" && !sameVersion(a.Version, b.Version):
				x, y = a.Version, b.Version
			case a.Image != "" && b.Image != "" && a.Image != b.Image:
				x, y = a.Image, b.Image
			default:
				continue
			}
			if a.Policy == b.Policy {
				return incomplete("Policy %s asks for two releases, %s and %s", a.Policy, quote(x), quote(y))
			}
			return incomplete("Policies %s and %s ask for different releases, %s and %s", a.Policy, b.Policy, quote(x), quote(y))
		}
	}
	return nil
}

// sameVersion compares versions as semantic versions when both parse, else as strings.
func sameVersion(a, b string) bool {
	va, errA := semver.Parse(a)
	vb, errB := semver.Parse(b)
	if errA == nil && errB == nil {
		return va.EQ(vb)
	}
	return a == b
}

// channels returns the channels whose graphs may give the image of t's version: its own,
// those the other ClusterVersions set (TALM merges them), then the default one.
func channels(t upgradecheck.Target, targets []upgradecheck.Target, defaultChannel string) []string {
	list := []string{t.Channel}
	for _, o := range targets {
		list = append(list, o.Channel)
	}
	return clean(append(list, defaultChannel))
}

// resolve returns the payload of t's version in the first of the channels' graphs that lists it.
func (d *derivation) resolve(t upgradecheck.Target, channels []string) (string, *problem) {
	if len(channels) == 0 {
		return "", incomplete("Policy %s asks for release %s by version only, and no channel is known to look its "+
			"image up in; set spec.desiredUpdate.image in the policy or overrides.platformImage in the PreCachingConfig",
			t.Policy, quote(t.Version))
	}
	var tried []string
	for _, channel := range channels {
		var g *updategraph.Graph
		if d.in.Graph != nil {
			g = d.in.Graph(channel)
		}
		if g == nil {
			tried = append(tried, "channel "+quote(channel)+" has no update graph")
			continue
		}
		if n, ok := g.Node(t.Version); ok && n.Payload != "" {
			return n.Payload, checkPlatformImage(n.Payload, "the update graph of channel "+quote(channel))
		}
		tried = append(tried, "the graph of channel "+quote(channel)+" does not list it")
	}
	return "", incomplete("Cannot find the image of release %s, which policy %s asks for (%s); set "+
		"spec.desiredUpdate.image in the policy or overrides.platformImage in the PreCachingConfig",
		quote(t.Version), t.Policy, strings.Join(tried, ", "))
}

// checkPlatformImage checks that image, from source, is an image reference with a registry
// and a tag or digest.
func checkPlatformImage(image, source string) *problem {
	if utf8.RuneCountInString(image) > MaxEntryLength {
		return &problem{reason: ranv1alpha1.ReasonInvalidPlatformImage,
			message: fmt.Sprintf("The platform image from %s is longer than %d characters", source, MaxEntryLength)}
	}
	if _, err := name.ParseReference(image, name.StrictValidation); err != nil {
		return &problem{reason: ranv1alpha1.ReasonInvalidPlatformImage,
			message: fmt.Sprintf("The platform image %s from %s is not an image reference with a registry and a tag or digest",
				quote(image), source)}
	}
	return nil
}

// packages returns the operator packages and channels to pre-cache.
func (d *derivation) packages(ops []operatorObject) []string {
	if o := clean(d.cfg.Overrides.OperatorsPackagesAndChannels); len(o) > 0 {
		d.packagesFrom = "overrides.operatorsPackagesAndChannels of the PreCachingConfig"
		for _, e := range o {
			if pkg, _, ok := strings.Cut(e, ":"); !ok || strings.TrimSpace(pkg) == "" {
				d.fail(incomplete("Entry %s of overrides.operatorsPackagesAndChannels is not \"package:channel\" "+
					"(\"package:\" for the default channel)", quote(e)))
				break
			}
		}
		return o
	}
	var out []string
	for _, o := range ops {
		if o.kind != kindSubscription {
			continue
		}
		switch {
		case o.templated != "":
			d.fail(incomplete("Policy %s sets %s of a Subscription with a template, resolved only on the clusters; "+
				"set overrides.operatorsPackagesAndChannels in the PreCachingConfig", o.policy, o.templated))
		case o.name == "":
			d.fail(incomplete("Policy %s has a Subscription without spec.name", o.policy))
		default:
			if d.packagesFrom == "" {
				d.packagesFrom = "policy " + o.policy
			}
			out = append(out, o.name+":"+o.channel)
		}
	}
	return clean(out)
}

// indexes returns the catalog index images to pre-cache.
func (d *derivation) indexes(ops []operatorObject) []string {
	if o := clean(d.cfg.Overrides.OperatorsIndexes); len(o) > 0 {
		d.indexesFrom = "overrides.operatorsIndexes of the PreCachingConfig"
		return o
	}
	var out []string
	for _, o := range ops {
		if o.kind != kindCatalogSource {
			continue
		}
		if o.templated != "" {
			d.fail(incomplete("Policy %s sets %s of a CatalogSource with a template, resolved only on the clusters; "+
				"set overrides.operatorsIndexes in the PreCachingConfig", o.policy, o.templated))
			continue
		}
		// A CatalogSource without an image (a gRPC address, a ConfigMap) has no index to pull.
		if d.indexesFrom == "" && o.image != "" {
			d.indexesFrom = "policy " + o.policy
		}
		out = append(out, o.image)
	}
	return clean(out)
}

// talmSize is the size syntax TALM accepts besides quantities: "30 GiB", "30GB", "30 G".
var talmSize = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?) ?([kKmMgGtTpP]?)(i?)[bB]?$`)

var errNotQuantity = errors.New("not a quantity")

// DefaultSpaceRequired is the free space checked when the PreCachingConfig sets none
// (TALM's).
const DefaultSpaceRequired = "35 GiB"

// gib is a gibibyte in bytes.
const gib = 1 << 30

// spaceRequired returns the PreCachingConfig's spaceRequired (DefaultSpaceRequired when it
// sets none) as TALM writes it: whole gibibytes, rounded up ("35").
func (d *derivation) spaceRequired() string {
	s := strings.TrimSpace(d.cfg.SpaceRequired)
	if s == "" {
		s = DefaultSpaceRequired
	}
	q, err := parseSize(s)
	switch {
	case err != nil:
		d.fail(incomplete("spaceRequired %s of the PreCachingConfig is not a quantity such as \"30Gi\"", quote(s)))
		return ""
	case q.Sign() <= 0:
		d.fail(incomplete("spaceRequired %s of the PreCachingConfig is not more than zero", quote(s)))
		return ""
	case utf8.RuneCountInString(q.String()) > MaxSpaceRequiredLength:
		d.fail(incomplete("spaceRequired %s of the PreCachingConfig is longer than %d characters", quote(s), MaxSpaceRequiredLength))
		return ""
	}
	v := q.Value()
	whole := v / gib
	if v%gib != 0 {
		whole++
	}
	return strconv.FormatInt(whole, 10)
}

// parseSize reads a quantity, or a size as TALM writes it: a decimal unit with an optional
// B, a binary one with iB, upper or lower case, after an optional space.
func parseSize(s string) (resource.Quantity, error) {
	if q, err := resource.ParseQuantity(s); err == nil {
		return q, nil
	}
	m := talmSize.FindStringSubmatch(s)
	if m == nil {
		return resource.Quantity{}, errNotQuantity
	}
	unit := strings.ToUpper(m[2])
	switch {
	case unit != "" && m[3] != "":
		unit += "i"
	case unit == "K":
		unit = "k"
	}
	return resource.ParseQuantity(m[1] + unit)
}

// list is one list field of a PrecachingSpec.
type list struct {
	field  string
	items  *[]string
	max    int
	length int
}

func lists(spec *ranv1alpha1.PrecachingSpec) []list {
	return []list{
		{"operatorsPackagesAndChannels", &spec.OperatorsPackagesAndChannels, MaxPackagesAndChannels, MaxShortEntryLength},
		{"operatorsIndexes", &spec.OperatorsIndexes, MaxIndexes, MaxEntryLength},
		{"excludePrecachePatterns", &spec.ExcludePrecachePatterns, MaxExcludePatterns, MaxShortEntryLength},
		{"additionalImages", &spec.AdditionalImages, MaxAdditionalImages, MaxEntryLength},
	}
}

// checkBounds checks the lists against the bounds of the status schema.
func (d *derivation) checkBounds(spec ranv1alpha1.PrecachingSpec) {
	for _, l := range lists(&spec) {
		if n := len(*l.items); n > l.max {
			d.fail(incomplete("The precache spec has %d %s, more than the %d it can hold", n, l.field, l.max))
		}
		for _, e := range *l.items {
			if utf8.RuneCountInString(e) > l.length {
				d.fail(incomplete("An entry of %s is longer than %d characters: %s", l.field, l.length, quote(e)))
				break
			}
		}
	}
}

// checkReferences checks that index and additional images are image references.
func (d *derivation) checkReferences(spec ranv1alpha1.PrecachingSpec) {
	for _, l := range []list{{field: "operatorsIndexes", items: &spec.OperatorsIndexes},
		{field: "additionalImages", items: &spec.AdditionalImages}} {
		for _, e := range *l.items {
			if _, err := name.ParseReference(e); err != nil {
				d.fail(incomplete("Entry %s of %s is not an image reference", quote(e), l.field))
				return
			}
		}
	}
}

// checkContent checks that operators come with an index, an index with operators (as TALM
// does: an index alone names nothing to pull from it), and that there is something to pull.
func (d *derivation) checkContent(spec ranv1alpha1.PrecachingSpec) {
	if len(spec.OperatorsPackagesAndChannels) > 0 && len(spec.OperatorsIndexes) == 0 {
		d.fail(incomplete("Operators to pre-cache come from %s, but no catalog index image: no managed policy has a "+
			"CatalogSource with spec.image and the PreCachingConfig sets no overrides.operatorsIndexes", d.packagesFrom))
	}
	if len(spec.OperatorsIndexes) > 0 && len(spec.OperatorsPackagesAndChannels) == 0 {
		d.fail(incomplete("A catalog index image comes from %s, but no operator package: no managed policy has a "+
			"Subscription and the PreCachingConfig sets no overrides.operatorsPackagesAndChannels", d.indexesFrom))
	}
	if spec.PlatformImage == "" && len(spec.OperatorsPackagesAndChannels) == 0 && len(spec.OperatorsIndexes) == 0 &&
		len(spec.AdditionalImages) == 0 {
		d.fail(incomplete("Nothing to pre-cache: no managed policy sets a release or operators, and no additional images"))
	}
}

// fit cuts a spec to the bounds: lists to their length, without entries that are too long.
func fit(spec ranv1alpha1.PrecachingSpec) ranv1alpha1.PrecachingSpec {
	if utf8.RuneCountInString(spec.PlatformImage) > MaxEntryLength {
		spec.PlatformImage = ""
	}
	for _, l := range lists(&spec) {
		var kept []string
		for _, e := range *l.items {
			if len(kept) < l.max && utf8.RuneCountInString(e) <= l.length {
				kept = append(kept, e)
			}
		}
		*l.items = kept
	}
	return spec
}

// clean trims entries and drops empty ones and duplicates, keeping the first of each; nil
// when nothing is left.
func clean(entries []string) []string {
	var out []string
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		if e = strings.TrimSpace(e); e != "" && !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// quote quotes a value for a message, cut to quoteLimit characters.
func quote(s string) string {
	if utf8.RuneCountInString(s) <= quoteLimit {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…", string([]rune(s)[:quoteLimit]))
}

// policyContent is what the managed policies ask for that matters to pre-caching.
type policyContent struct {
	// releases are the ClusterVersion targets.
	releases []upgradecheck.Target
	// operators are the Subscriptions and CatalogSources.
	operators []operatorObject
}

// operatorObject is a Subscription or a CatalogSource that a policy asks for.
type operatorObject struct {
	policy, kind string
	// name and channel are a Subscription's spec.name and spec.channel; image is a
	// CatalogSource's spec.image.
	name, channel, image string
	// templated names the first field set by a template, "" when none is.
	templated string
}

// readPolicies reads the policies; the problem names the first one that cannot be read,
// whose content is left out.
func readPolicies(policies []*policyv1.Policy) (policyContent, *problem) {
	var c policyContent
	var first *problem
	for _, p := range policies {
		if p == nil {
			continue
		}
		targets, err := upgradecheck.Targets(p)
		var ops []operatorObject
		if err == nil {
			ops, err = operatorObjects(p)
		}
		if err != nil {
			if first == nil {
				first = incomplete("Cannot read a managed policy: %v", err)
			}
			continue
		}
		for _, t := range targets {
			if t.Kind == upgradecheck.KindClusterVersion {
				c.releases = append(c.releases, t)
			}
		}
		c.operators = append(c.operators, ops...)
	}
	return c, first
}

// operatorObjects returns the Subscriptions and CatalogSources of a policy, in template order.
func operatorObjects(p *policyv1.Policy) ([]operatorObject, error) {
	return policyobjects.Collect(p, []string{kindSubscription, kindCatalogSource},
		func(obj map[string]any) (operatorObject, bool, error) {
			o, ok, err := operator(obj)
			o.policy = p.Name
			return o, ok, err
		},
		func(kind string) operatorObject {
			return operatorObject{policy: p.Name, kind: kind, templated: "object-templates-raw"}
		})
}

// objectField is a string field of an object and where to read it into.
type objectField struct {
	path string
	into *string
}

// operator reads an object definition that is an OLM Subscription or CatalogSource.
func operator(obj map[string]any) (operatorObject, bool, error) {
	kind, _, err := policyobjects.String(obj, "kind")
	if err != nil {
		return operatorObject{}, false, err
	}
	apiVersion, apiTemplated, err := policyobjects.String(obj, "apiVersion")
	if err != nil {
		return operatorObject{}, false, err
	}
	if group, _, _ := strings.Cut(apiVersion, "/"); group != olmGroup && !apiTemplated {
		return operatorObject{}, false, nil
	}
	o := operatorObject{kind: kind}
	var fields []objectField
	switch kind {
	case kindSubscription:
		fields = []objectField{{"spec.name", &o.name}, {"spec.channel", &o.channel}}
	case kindCatalogSource:
		fields = []objectField{{"spec.image", &o.image}}
	default:
		return operatorObject{}, false, nil
	}
	for _, f := range fields {
		value, templated, err := policyobjects.String(obj, strings.Split(f.path, ".")...)
		if err != nil {
			return operatorObject{}, false, err
		}
		*f.into = strings.TrimSpace(value)
		if templated && o.templated == "" {
			o.templated = f.path
		}
	}
	return o, true, nil
}
