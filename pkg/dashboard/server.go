// Package dashboard serves kubectl cgu dashboard: a web page, served on the user's own
// machine with the user's own kubeconfig, that shows the rollouts of a namespace (or of every
// namespace) live, and steers them with the actions of kubectl cgu.
//
// The server keeps shared informers on the objects it shows (ClusterGroupUpgrades, their
// batch records, ImageBasedGroupUpgrades, ManagedClustersUpgrades and ReleaseTrains when the
// hub serves them, and the events about ClusterGroupUpgrades) and pushes what changed to each
// open page as server-sent events: the page never polls, and the server never lists the
// fleet from the API server after its informers synced (a cluster's story and the map's
// labels are read when the page asks).
// What it pushes is bounded (view.go), but for the map (fleet.go): counts, the timeline of
// batches, ProblemLimit held and failed clusters, GroupLimit groups of events and at most
// ProgressPoints points of the chart; a train's rings and ledger, within the API's limits
// (trains.go); the map's names once, then the states that changed.
//
// The page acts with the user's credentials, so the server refuses a request that a page of
// another site could make: every request must name the server's own host (no DNS
// rebinding), and every action must carry the token the page was served with.
package dashboard

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	authenticationv1 "k8s.io/api/authentication/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/control"
)

//go:embed web
var web embed.FS

// TokenHeader carries the page's token on every action.
const TokenHeader = "X-Cgu-Dashboard-Token" //nolint:gosec // the header's name, not a credential

// pushEvery is the shortest time between two pushes to one page: changes in between are
// sent together.
const pushEvery = 250 * time.Millisecond

// keepAlive is how often an idle stream sends a comment, so that proxies keep it open.
const keepAlive = 25 * time.Second

// Indexes of the cache.
const (
	recordsByUpgrade = "spec.upgrade"
	eventsByObject   = "involvedObject"
)

// Options configure a Server.
type Options struct {
	// Config reaches the hub as the user.
	Config *rest.Config
	// Namespace is the namespace shown; empty shows every namespace.
	Namespace string
	// Now tells the time; nil means time.Now.
	Now func() time.Time
}

// Server is the dashboard's HTTP server and the informers it reads.
type Server struct {
	cache     cache.Cache
	client    client.Client
	namespace string
	groups    bool
	// releases is true on a hub that serves ManagedClustersUpgrades, trains on one that
	// serves ReleaseTrains.
	releases  bool
	trains    bool
	token     string
	now       func() time.Time
	changes   broker
	indexPage *template.Template
	// stopped is closed once the informers stopped, after Start's context ended.
	stopped chan struct{}
}

// NewScheme knows the kinds the dashboard reads and writes.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		ranv1alpha1.AddToScheme, lcmv1alpha1.AddToScheme, corev1.AddToScheme, authenticationv1.AddToScheme,
		// What a cluster's story reads (pkg/story): the replicated policies and the
		// rollout's views.
		policyv1.AddToScheme, viewv1beta1.AddToScheme,
	} {
		utilruntime.Must(add(s))
	}
	return s
}

// New prepares a server; Start fills its informers.
func New(o Options) (*Server, error) {
	scheme := NewScheme()
	hc, err := rest.HTTPClientFor(o.Config)
	if err != nil {
		return nil, fmt.Errorf("creating an HTTP client of the hub: %w", err)
	}
	c, err := client.New(o.Config, client.Options{Scheme: scheme, HTTPClient: hc})
	if err != nil {
		return nil, fmt.Errorf("creating a client of the hub: %w", err)
	}
	s := &Server{client: c, namespace: o.Namespace, now: o.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if _, err := c.RESTMapper().RESTMapping(lcmv1alpha1.GroupVersion.WithKind(KindIBGU).GroupKind()); err == nil {
		s.groups = true
	} else if !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("asking the hub whether it serves ImageBasedGroupUpgrades: %w", err)
	}
	if _, err := c.RESTMapper().RESTMapping(ranv1alpha1.GroupVersion.WithKind(KindMCU).GroupKind()); err == nil {
		s.releases = true
	} else if !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("asking the hub whether it serves ManagedClustersUpgrades: %w", err)
	}
	if _, err := c.RESTMapper().RESTMapping(ranv1alpha1.GroupVersion.WithKind(KindTrain).GroupKind()); err == nil {
		s.trains = true
	} else if !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("asking the hub whether it serves ReleaseTrains: %w", err)
	}
	opts := cache.Options{
		Scheme: scheme, HTTPClient: hc, Mapper: c.RESTMapper(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			// Only the events about ClusterGroupUpgrades, not every event of the namespace.
			&corev1.Event{}: {Field: fields.OneTermEqualSelector("involvedObject.kind", KindCGU)},
		},
	}
	if o.Namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{o.Namespace: {}}
	}
	if s.cache, err = cache.New(o.Config, opts); err != nil {
		return nil, fmt.Errorf("creating the informers: %w", err)
	}
	if s.token, err = newToken(); err != nil {
		return nil, err
	}
	page, err := fs.ReadFile(web, "web/index.html")
	if err != nil {
		return nil, fmt.Errorf("reading the embedded page: %w", err)
	}
	if s.indexPage, err = template.New("index").Parse(string(page)); err != nil {
		return nil, fmt.Errorf("parsing the embedded page: %w", err)
	}
	return s, nil
}

func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the page's token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Start runs the informers until ctx ends and returns once they synced. A kind the user may
// not list is refused at once, with the API server's answer: an informer would retry
// forever.
func (s *Server) Start(ctx context.Context) error {
	if err := s.checkAccess(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	if err := s.cache.IndexField(ctx, &ranv1alpha1.ClusterGroupUpgradeBatch{}, recordsByUpgrade, func(o client.Object) []string {
		return []string{o.GetNamespace() + "/" + o.(*ranv1alpha1.ClusterGroupUpgradeBatch).Spec.Upgrade}
	}); err != nil {
		cancel()
		return fmt.Errorf("indexing the batch records: %w", err)
	}
	if err := s.cache.IndexField(ctx, &corev1.Event{}, eventsByObject, func(o client.Object) []string {
		e := o.(*corev1.Event)
		return []string{e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name}
	}); err != nil {
		cancel()
		return fmt.Errorf("indexing the events: %w", err)
	}
	kinds := []client.Object{&ranv1alpha1.ClusterGroupUpgrade{}, &ranv1alpha1.ClusterGroupUpgradeBatch{}, &corev1.Event{}}
	if s.groups {
		kinds = append(kinds, &lcmv1alpha1.ImageBasedGroupUpgrade{})
	}
	if s.releases {
		kinds = append(kinds, &ranv1alpha1.ManagedClustersUpgrade{})
	}
	if s.trains {
		kinds = append(kinds, &ranv1alpha1.ReleaseTrain{})
	}
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.changes.notify() },
		UpdateFunc: func(any, any) { s.changes.notify() },
		DeleteFunc: func(any) { s.changes.notify() },
	}
	for _, kind := range kinds {
		informer, err := s.cache.GetInformer(ctx, kind)
		if err != nil {
			cancel()
			return fmt.Errorf("watching %T: %w", kind, err)
		}
		if _, err := informer.AddEventHandler(handler); err != nil {
			cancel()
			return fmt.Errorf("watching %T: %w", kind, err)
		}
	}
	s.stopped = make(chan struct{})
	go func() {
		defer close(s.stopped)
		defer cancel()
		_ = s.cache.Start(ctx)
	}()
	if !s.cache.WaitForCacheSync(ctx) {
		cancel()
		<-s.stopped
		return errors.New("the informers did not sync: can you list and watch ClusterGroupUpgrades, their batches, ReleaseTrains and events?")
	}
	return nil
}

// checkAccess lists one object of each kind the informers watch, as the user.
func (s *Server) checkAccess(ctx context.Context) error {
	lists := []client.ObjectList{&ranv1alpha1.ClusterGroupUpgradeList{}, &ranv1alpha1.ClusterGroupUpgradeBatchList{}, &corev1.EventList{}}
	if s.groups {
		lists = append(lists, &lcmv1alpha1.ImageBasedGroupUpgradeList{})
	}
	if s.releases {
		lists = append(lists, &ranv1alpha1.ManagedClustersUpgradeList{})
	}
	if s.trains {
		lists = append(lists, &ranv1alpha1.ReleaseTrainList{})
	}
	for _, list := range lists {
		opts := []client.ListOption{client.Limit(1)}
		if s.namespace != "" {
			opts = append(opts, client.InNamespace(s.namespace))
		}
		if err := s.client.List(ctx, list, opts...); err != nil {
			return fmt.Errorf("the dashboard reads ClusterGroupUpgrades, their batches, ImageBasedGroupUpgrades, ManagedClustersUpgrades, ReleaseTrains and events: %w", err)
		}
	}
	return nil
}

// Scope is what the page shows: a namespace or every namespace.
func (s *Server) Scope() string {
	if s.namespace == "" {
		return "all namespaces"
	}
	return "namespace " + s.namespace
}

// Handler serves the page, its files, its data and its actions. Every request must name
// one of hosts (the addresses the server listens on, as the browser writes them).
func (s *Server) Handler(hosts ...string) http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(web, "web")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /api/labels", s.serveLabels)
	mux.HandleFunc("GET /api/story", s.serveStory)
	mux.HandleFunc("GET /api/overview", s.serveOverview)
	mux.HandleFunc("GET /api/detail", s.serveDetail)
	mux.HandleFunc("GET /api/trains", s.serveTrains)
	mux.HandleFunc("GET /api/stream", s.stream)
	mux.HandleFunc("POST /api/action", s.act)
	return onlyHosts(hosts, secureHeaders(mux))
}

// onlyHosts refuses requests for another host: a page of another site that resolves its
// own name to 127.0.0.1 (DNS rebinding) reaches the server with that name.
func onlyHosts(hosts []string, next http.Handler) http.Handler {
	if len(hosts) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range hosts {
			if strings.EqualFold(r.Host, h) {
				next.ServeHTTP(w, r)
				return
			}
		}
		http.Error(w, "unknown host "+r.Host, http.StatusMisdirectedRequest)
	})
}

// secureHeaders keeps the page in its own frame and to its own origin.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// Hosts are the Host headers a browser sends to a server listening on addr: the address
// itself, and localhost for a loopback address. An address on every interface accepts any
// host (nil).
func Hosts(addr net.Addr) []string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		return nil
	}
	port := fmt.Sprint(tcp.Port)
	hosts := []string{net.JoinHostPort(tcp.IP.String(), port)}
	if tcp.IP.IsLoopback() {
		hosts = append(hosts, net.JoinHostPort("localhost", port))
	}
	return hosts
}

func (s *Server) index(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := s.indexPage.Execute(w, map[string]string{"Token": s.token, "Scope": s.Scope()}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// selection is the rollout a page shows in detail.
type selection struct {
	kind, namespace, name string
}

func selected(r *http.Request) selection {
	q := r.URL.Query()
	return selection{kind: q.Get("kind"), namespace: q.Get("namespace"), name: q.Get("name")}
}

// Overview lists the rollouts in scope, from the informers.
func (s *Server) Overview(ctx context.Context) (Overview, error) {
	var cgus ranv1alpha1.ClusterGroupUpgradeList
	if err := s.cache.List(ctx, &cgus); err != nil {
		return Overview{}, fmt.Errorf("listing ClusterGroupUpgrades: %w", err)
	}
	var groups lcmv1alpha1.ImageBasedGroupUpgradeList
	if s.groups {
		if err := s.cache.List(ctx, &groups); err != nil {
			return Overview{}, fmt.Errorf("listing ImageBasedGroupUpgrades: %w", err)
		}
	}
	var releases ranv1alpha1.ManagedClustersUpgradeList
	if s.releases {
		if err := s.cache.List(ctx, &releases); err != nil {
			return Overview{}, fmt.Errorf("listing ManagedClustersUpgrades: %w", err)
		}
	}
	o := NewOverview(s.Scope(), cgus.Items, groups.Items, releases.Items)
	o.Now = s.now()
	return o, nil
}

// Trains are the release trains in scope, from the informers.
func (s *Server) Trains(ctx context.Context) (Trains, error) {
	var trains ranv1alpha1.ReleaseTrainList
	if s.trains {
		if err := s.cache.List(ctx, &trains); err != nil {
			return Trains{}, fmt.Errorf("listing ReleaseTrains: %w", err)
		}
	}
	return TrainsOf(s.Scope(), s.trains, trains.Items), nil
}

// Detail is one rollout's page, from the informers; nil when it does not exist.
func (s *Server) Detail(ctx context.Context, sel selection) (*Detail, error) {
	d, _, err := s.page(ctx, sel)
	return d, err
}

// page is one rollout's page and, for a ClusterGroupUpgrade whose plan is frozen, its map;
// nil when the rollout does not exist.
func (s *Server) page(ctx context.Context, sel selection) (*Detail, *Fleet, error) {
	key := client.ObjectKey{Namespace: sel.namespace, Name: sel.name}
	var events corev1.EventList
	if err := s.cache.List(ctx, &events, client.MatchingFields{eventsByObject: key.String()}); err != nil {
		return nil, nil, fmt.Errorf("listing the events of %s: %w", key, err)
	}
	if sel.kind == KindIBGU {
		if !s.groups {
			return nil, nil, nil
		}
		g := &lcmv1alpha1.ImageBasedGroupUpgrade{}
		if err := s.cache.Get(ctx, key, g); err != nil {
			return nil, nil, client.IgnoreNotFound(err)
		}
		d := GroupDetail(g, nil)
		return &d, nil, nil
	}
	if sel.kind == KindMCU {
		if !s.releases {
			return nil, nil, nil
		}
		m := &ranv1alpha1.ManagedClustersUpgrade{}
		if err := s.cache.Get(ctx, key, m); err != nil {
			return nil, nil, client.IgnoreNotFound(err)
		}
		d := ReleaseDetail(m, nil)
		return &d, nil, nil
	}
	cgu, records, err := s.upgrade(ctx, key)
	if cgu == nil || err != nil {
		return nil, nil, err
	}
	d := UpgradeDetail(cgu, records, events.Items, s.now())
	return &d, FleetOf(records, cgu.Status), nil
}

// upgrade is a ClusterGroupUpgrade and its batch records, from the informers; nil when it
// does not exist.
func (s *Server) upgrade(ctx context.Context, key client.ObjectKey) (*ranv1alpha1.ClusterGroupUpgrade, []ranv1alpha1.ClusterGroupUpgradeBatch, error) {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	if err := s.cache.Get(ctx, key, cgu); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	var records ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := s.cache.List(ctx, &records, client.InNamespace(key.Namespace), client.MatchingFields{recordsByUpgrade: key.String()}); err != nil {
		return nil, nil, fmt.Errorf("listing the batches of %s: %w", key, err)
	}
	return cgu, records.Items, nil
}

func (s *Server) serveOverview(w http.ResponseWriter, r *http.Request) {
	o, err := s.Overview(r.Context())
	writeJSON(w, o, err)
}

func (s *Server) serveTrains(w http.ResponseWriter, r *http.Request) {
	t, err := s.Trains(r.Context())
	writeJSON(w, t, err)
}

func (s *Server) serveDetail(w http.ResponseWriter, r *http.Request) {
	d, err := s.Detail(r.Context(), selected(r))
	if err == nil && d == nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	writeJSON(w, d, err)
}

func writeJSON(w http.ResponseWriter, v any, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

// stream pushes the overview, the trains, and the selected rollout's detail, each time the
// informers see a change, at most every pushEvery, and only what differs from the last push.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	changed, unsubscribe := s.changes.subscribe()
	defer unsubscribe()
	p := &pusher{s: s, w: w, flusher: flusher, sel: selected(r)}
	ctx := r.Context()
	if err := p.push(ctx); err != nil {
		return
	}
	alive := time.NewTicker(keepAlive)
	defer alive.Stop()
	pace := time.NewTimer(pushEvery)
	defer pace.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-alive.C:
			err = p.keepAlive()
		case <-changed:
			// Wait out the pace, so that a burst of changes makes one push.
			select {
			case <-ctx.Done():
				return
			case <-pace.C:
			}
			err = p.push(ctx)
			pace.Reset(pushEvery)
		}
		if err != nil {
			return
		}
	}
}

// pusher writes one page's stream and remembers what it last sent: the overview's, the
// detail's and the trains' JSON, and the map's epoch and states, so that it sends only what
// changed.
type pusher struct {
	s       *Server
	w       http.ResponseWriter
	flusher http.Flusher
	sel     selection
	last    [3][]byte
	epoch   string
	states  string
}

func (p *pusher) push(ctx context.Context) error {
	o, err := p.s.Overview(ctx)
	if err != nil {
		return err
	}
	if err := sendIfChanged(p.w, "overview", o, &p.last[0]); err != nil {
		return err
	}
	t, err := p.s.Trains(ctx)
	if err != nil {
		return err
	}
	if err := sendIfChanged(p.w, "trains", t, &p.last[2]); err != nil {
		return err
	}
	if p.sel.name != "" {
		d, f, err := p.s.page(ctx, p.sel)
		if err != nil {
			return err
		}
		if err := sendIfChanged(p.w, "detail", d, &p.last[1]); err != nil {
			return err
		}
		if err := p.pushFleet(f); err != nil {
			return err
		}
	}
	p.flusher.Flush()
	return nil
}

// pushFleet sends the map whole when its clusters changed (or it went away), else the states
// that changed.
func (p *pusher) pushFleet(f *Fleet) error {
	switch {
	case f == nil && p.epoch != "":
		p.epoch, p.states = "", ""
		return send(p.w, "fleet", nil)
	case f == nil:
		return nil
	case f.Epoch != p.epoch:
		p.epoch, p.states = f.Epoch, f.States
		return send(p.w, "fleet", f)
	}
	d := DeltaOf(f.Epoch, p.states, f.States)
	if d == nil {
		return nil
	}
	p.states = f.States
	return send(p.w, "states", d)
}

// send writes one server-sent event named name with v as JSON.
func send(w io.Writer, name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
	return err
}

func (p *pusher) keepAlive() error {
	if _, err := fmt.Fprint(p.w, ": keep-alive\n\n"); err != nil {
		return err
	}
	p.flusher.Flush()
	return nil
}

// sendIfChanged writes one server-sent event named name with v as JSON, unless it is what
// was sent last.
func sendIfChanged(w http.ResponseWriter, name string, v any, last *[]byte) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if string(data) == string(*last) {
		return nil
	}
	*last = data
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
	return err
}

// ActionRequest is what the page posts to act on a ClusterGroupUpgrade.
type ActionRequest struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Action is enable, pause, resume or approve.
	Action string `json:"action"`
	// Batch is the batch to approve; 0 approves the batch that waits.
	Batch int `json:"batch,omitempty"`
}

// ActionResult is what an action answers: a message, or the error that refused it.
type ActionResult struct {
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

func (s *Server) act(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(TokenHeader) != s.token {
		answer(w, http.StatusForbidden, ActionResult{Error: "this page's token is missing or stale: reload the page"})
		return
	}
	var req ActionRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
		answer(w, http.StatusBadRequest, ActionResult{Error: "reading the action: " + err.Error()})
		return
	}
	if s.namespace != "" && req.Namespace != s.namespace {
		answer(w, http.StatusBadRequest, ActionResult{Error: fmt.Sprintf("namespace %q is not shown here", req.Namespace)})
		return
	}
	key := client.ObjectKey{Namespace: req.Namespace, Name: req.Name}
	var message string
	var err error
	switch req.Action {
	case "enable":
		err, message = control.Enable(r.Context(), s.client, key), "Enabled "+key.String()
	case "pause":
		err, message = control.SetPaused(r.Context(), s.client, key, true), "Paused "+key.String()
	case "resume":
		err, message = control.SetPaused(r.Context(), s.client, key, false), "Resumed "+key.String()
	case "approve":
		var a control.Approval
		a, err = control.Approve(r.Context(), s.client, key, req.Batch)
		message = fmt.Sprintf("Approved batch %d of %s as %s", a.Batch, key, a.By)
	default:
		answer(w, http.StatusBadRequest, ActionResult{Error: fmt.Sprintf("unknown action %q", req.Action)})
		return
	}
	if errors.Is(err, control.ErrNotWaitingForApproval) {
		err = fmt.Errorf("%s %w", key, err)
	}
	if err != nil {
		answer(w, actionStatus(err), ActionResult{Error: err.Error()})
		return
	}
	answer(w, http.StatusOK, ActionResult{Message: message})
}

// actionStatus is the HTTP status of an action's error: the API server's own, when it
// refused.
func actionStatus(err error) int {
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &status) && status.Status().Code != 0:
		return int(status.Status().Code)
	case errors.Is(err, control.ErrNotWaitingForApproval):
		return http.StatusConflict
	}
	return http.StatusBadGateway
}

func answer(w http.ResponseWriter, code int, v ActionResult) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// broker tells every open stream that something changed. A stream that has not taken the
// last notice yet gets no second one: it will read everything when it does.
type broker struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

func (b *broker) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[chan struct{}]struct{}{}
	}
	b.subs[ch] = struct{}{}
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.subs, ch)
	}
}

func (b *broker) notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Serve listens on address (host:port; port 0 picks a free one), fills the informers,
// calls ready with the page's URL and serves until ctx ends. It returns once its watches of
// the hub are closed: a hub stopped after it returns has no request of its to wait for.
func Serve(ctx context.Context, o Options, address string, ready func(url string)) error {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", address)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", address, err)
	}
	defer func() { _ = l.Close() }()
	s, err := New(o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		return err
	}
	srv := &http.Server{Handler: s.Handler(Hosts(l.Addr())...), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	ready(URL(l.Addr()))
	select {
	case err = <-done:
		err = fmt.Errorf("serving the dashboard: %w", err)
	case <-ctx.Done():
	}
	cancel()
	shutdown, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	// The event streams end with ctx; Shutdown waits for the others.
	_ = srv.Shutdown(shutdown)
	<-s.stopped
	return err
}

// URL is the page's address for a server listening on addr: localhost stands for a
// loopback or unspecified address.
func URL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return "http://" + addr.String() + "/"
	}
	host := tcp.IP.String()
	if tcp.IP.IsLoopback() && tcp.IP.To4() != nil {
		host = "127.0.0.1"
	} else if tcp.IP.IsUnspecified() || tcp.IP.IsLoopback() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(tcp.Port)) + "/"
}
