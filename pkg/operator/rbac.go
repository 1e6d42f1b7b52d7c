package operator

// The manager's own cluster-wide needs: events, and the authentication and
// authorization of metrics scrapes. Each controller declares the access it needs next to
// its Reconcile.

// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
