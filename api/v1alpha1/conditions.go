package v1alpha1

// Condition types of a ClusterGroupUpgrade. The names are TALM's, spelling included
// ("PrecachingSuceeded", "BackupSuceeded"), so that tools reading TALM conditions keep
// working; docs/talm-compatibility.md lists them with their reasons.
const (
	// ConditionClustersSelected is True when every named cluster exists and at least one
	// cluster is selected.
	ConditionClustersSelected = "ClustersSelected"
	// ConditionValidated is True when the managed policies, canaries and templates are
	// resolved and consistent.
	ConditionValidated = "Validated"
	// ConditionPrecacheSpecValid is True when the precache spec derived from the policies
	// and the PreCachingConfig is complete.
	ConditionPrecacheSpecValid = "PrecacheSpecValid"
	// ConditionPrecachingSucceeded is True when every cluster finished pre-caching, with
	// TALM's spelling; cgu-operator wrote "PrecachingSucceeded" before and removes that
	// condition from the CGUs it reconciles.
	ConditionPrecachingSucceeded = "PrecachingSuceeded"
	// ConditionPrecachingSucceededOld is the spelling cgu-operator wrote before it took
	// TALM's; it is removed when found.
	ConditionPrecachingSucceededOld = "PrecachingSucceeded"
	// ConditionBackupSucceeded is TALM's condition on the backup before the upgrade (TALM's
	// spelling), present when spec.backup is true.
	ConditionBackupSucceeded = "BackupSuceeded"
	// ConditionProgressing is True while the rollout enforces policies.
	ConditionProgressing = "Progressing"
	// ConditionSucceeded is True once every cluster completed, False once the rollout
	// ended otherwise.
	ConditionSucceeded = "Succeeded"
	// ConditionUpgradeChecked is True when spec.upgradeChecks let every cluster that has not
	// started proceed, False when some are held or rejected, Unknown while verdicts are
	// pending; absent without pathValidation.
	ConditionUpgradeChecked = "UpgradeChecked"
	// ConditionReconciled is False, with the failure as reason and message, after a reconcile
	// that failed on something other than a conflict or a lagging cache (a write the API
	// server refused, a missing object); the next reconcile that succeeds removes it, so that
	// TALM's list of conditions is unchanged while nothing fails.
	ConditionReconciled = "Reconciled"
)

// Condition reasons. Where TALM has a reason for the same situation the name is TALM's.
const (
	// ReasonClusterSelectionCompleted (ClustersSelected=True): clusters are selected.
	ReasonClusterSelectionCompleted = "ClusterSelectionCompleted"
	// ReasonClusterNotFound (ClustersSelected=False): named clusters do not exist; the
	// message names them.
	ReasonClusterNotFound = "ClusterNotFound"
	// ReasonNoClustersSelected (ClustersSelected=False): the spec selects no cluster.
	ReasonNoClustersSelected = "NoClustersSelected"
	// ReasonClusterOutsideBoundSets (ClustersSelected=False, tenancy mode only): named
	// clusters exist but belong to no ManagedClusterSet bound to the ClusterGroupUpgrade's
	// namespace; the message names them. The rollout never starts.
	ReasonClusterOutsideBoundSets = "ClusterOutsideBoundSets"

	// ReasonPlacementNotFound (ClustersSelected=False): spec.placementRef names a
	// Placement that does not exist.
	ReasonPlacementNotFound = "PlacementNotFound"
	// ReasonInvalidClusterSelector (ClustersSelected=False): a clusterSelector string or
	// clusterLabelSelector cannot be parsed; the message names it.
	ReasonInvalidClusterSelector = "InvalidClusterSelector"

	// ReasonValidationCompleted (Validated=True): the spec is consistent.
	ReasonValidationCompleted = "ValidationCompleted"
	// ReasonNotAllManagedPoliciesExist (Validated=False): managed policies are missing;
	// the message names them.
	ReasonNotAllManagedPoliciesExist = "NotAllManagedPoliciesExist"
	// ReasonAmbiguousManagedPoliciesNames (Validated=False): a managed policy name exists
	// in more than one namespace; the message names both.
	ReasonAmbiguousManagedPoliciesNames = "AmbiguousManagedPoliciesNames"
	// ReasonPolicyNamespaceNotAllowed (Validated=False): a managed policy is found, placed
	// on the selected clusters, only in namespaces the operator's --policy-namespaces does
	// not allow; the message names each such policy with its namespaces, and the allowed
	// namespaces. The rollout never starts.
	ReasonPolicyNamespaceNotAllowed = "PolicyNamespaceNotAllowed"
	// ReasonInvalidCanaries (Validated=False): canaries that are not selected clusters.
	ReasonInvalidCanaries = "InvalidCanaries"
	// ReasonInvalidSpread (Validated=False): spec.remediationStrategy.spread or antiAffinity
	// cannot be honoured: no planned cluster carries a label it names, or it needs more
	// batches than the timeout has minutes.
	ReasonInvalidSpread = "InvalidSpread"
	// ReasonPolicyDependencyOrder (Validated=False): a managed policy comes before a
	// managed policy it depends on; the message names both. The value is TALM's reason,
	// spelling included.
	ReasonPolicyDependencyOrder = "UnresolvableDenpendency"
	// ReasonNotAllManifestTemplatesExist (Validated=False): ManifestWorkReplicaSets named
	// in spec.manifestWorkTemplates are missing; the message names them.
	ReasonNotAllManifestTemplatesExist = "NotAllManifestTemplatesExist"
	// ReasonHubAPINotServed (Validated=False): the spec asks for a feature that needs an
	// API the hub does not serve (ManagedClusterViews or ManagedClusterActions for
	// pre-caching, the upgrade and health checks and InstallPlan approval); the message
	// names the field and the APIs. The rollout never starts.
	ReasonHubAPINotServed = "HubAPINotServed"
	// ReasonInvalidManifestTemplate (Validated=False): a ManifestWorkReplicaSet the spec
	// names carries an expected feedback annotation that cannot be read; the message says why.
	ReasonInvalidManifestTemplate = "InvalidManifestTemplate"
	// ReasonUnsupportedHubTemplate (Validated=False): in Copy mode, a managed policy's hub
	// template reads something the enforce copy cannot read from the CGU's namespace; the
	// message names the policy and the expression.
	ReasonUnsupportedHubTemplate = "UnsupportedHubTemplate"
	// ReasonInvalidMaintenanceWindow (Validated=False): a maintenance window cannot be read;
	// the message names the field.
	ReasonInvalidMaintenanceWindow = "InvalidMaintenanceWindow"
	// ReasonBackupCompleted (BackupSuceeded=True): every planned cluster was backed up.
	ReasonBackupCompleted = "BackupCompleted"
	// BackupSuceeded=True PartiallyDone (ReasonPartiallyDone): the backup of some clusters
	// failed or timed out; they leave the plan. BackupSuceeded=False InProgress
	// (ReasonInProgress): backups run.
	//
	// ReasonBackupFailed (BackupSuceeded=False): the backup of every cluster failed or timed
	// out.
	ReasonBackupFailed = "Failed"
	// ReasonBackupFailedEverywhere (state CannotStart): no cluster is left to upgrade after
	// the backups; the message says so.
	ReasonBackupFailedEverywhere = "BackupFailed"
	// ReasonNotStarted (Progressing=False): an enabled rollout waits for what must happen
	// before its first batch (TALM: the backup).
	ReasonNotStarted = "NotStarted"

	// ReasonPrecacheSpecIsWellFormed (PrecacheSpecValid=True).
	ReasonPrecacheSpecIsWellFormed = "PrecacheSpecIsWellFormed"
	// ReasonPrecacheSpecIncomplete (PrecacheSpecValid=False): something to pre-cache could
	// not be resolved; the message says what.
	ReasonPrecacheSpecIncomplete = "PrecacheSpecIncomplete"
	// ReasonInvalidPlatformImage (PrecacheSpecValid=False): the release image is not a
	// valid image reference.
	ReasonInvalidPlatformImage = "InvalidPlatformImage"

	// ReasonPrecachingCompleted (PrecachingSucceeded=True): every cluster pre-cached.
	ReasonPrecachingCompleted = "PrecachingCompleted"
	// ReasonPartiallyDone (PrecachingSucceeded=True): some clusters failed to pre-cache
	// and left the plan.
	ReasonPartiallyDone = "PartiallyDone"
	// ReasonPrecachingFailed (PrecachingSucceeded=False): every cluster failed to pre-cache.
	ReasonPrecachingFailed = "Failed"
	// ReasonPrecachingInProgress (Progressing=False, state NotStarted): an enabled rollout
	// waits for pre-caching to end on every cluster before it starts.
	ReasonPrecachingInProgress = "PrecachingInProgress"
	// ReasonPrecachingFailedEverywhere (state CannotStart; as in TALM no Progressing
	// condition is written then, and PrecachingSuceeded=False Failed stands last):
	// pre-caching failed or timed out on every cluster, so no cluster is left to upgrade.
	ReasonPrecachingFailedEverywhere = "PrecachingFailed"

	// ReasonNotEnabled (Progressing=False): spec.enable is false.
	ReasonNotEnabled = "NotEnabled"
	// ReasonMissingBlockingCR (Progressing=False): a blocking ClusterGroupUpgrade does not
	// exist.
	ReasonMissingBlockingCR = "MissingBlockingCR"
	// ReasonIncompleteBlockingCR (Progressing=False): a blocking ClusterGroupUpgrade has not
	// completed.
	ReasonIncompleteBlockingCR = "IncompleteBlockingCR"
	// ReasonBlockingCRCycle (Progressing=False): the blocking CGUs form a cycle through
	// this one; the message lists the cycle.
	ReasonBlockingCRCycle = "BlockingCRCycle"
	// ReasonPaused (Progressing=True): spec.paused holds the rollout; clusters already working
	// on a policy go on.
	ReasonPaused = "Paused"
	// ReasonFleetFrozen (Progressing=True): a FleetFreeze holds every rollout on the hub; no
	// batch or cluster starts, clusters already upgrading finish.
	ReasonFleetFrozen = "FleetFrozen"
	// ReasonWaitingForApproval (Progressing=True): the next batch waits for an approval.
	ReasonWaitingForApproval = "WaitingForApproval"
	// ReasonOutsideMaintenanceWindow (Progressing=True): the next batch waits for a
	// maintenance window; the message says when the next one opens.
	ReasonOutsideMaintenanceWindow = "OutsideMaintenanceWindow"
	// ReasonBatchSoaking (Progressing=True): a finished batch's clusters must stay compliant
	// a while before the batch counts as done.
	ReasonBatchSoaking = "BatchSoaking"
	// ReasonBatchAnalysis (Progressing=True): a finished batch's analysis gates
	// (spec.analysis) measure its clusters before the batch ends.
	ReasonBatchAnalysis = "BatchAnalysis"
	// ReasonAnalysisInconclusive (Progressing=True): the last measurement of an analysis gate
	// got no usable answer (the endpoint unreachable or erroring, values missing); the batch
	// holds, and fails the analysis at its deadline.
	ReasonAnalysisInconclusive = "AnalysisInconclusive"
	// ReasonAnalysisFailed (on a cluster; Progressing=False with onFailure Abort): an
	// analysis gate failed the cluster.
	ReasonAnalysisFailed = "AnalysisFailed"
	// ReasonInvalidAnalysis (Validated=False): spec.analysis cannot run: a query that does not
	// parse, a Secret missing or empty.
	ReasonInvalidAnalysis = "InvalidAnalysis"
	// ReasonNoAlertmanager (Validated=False): spec.silenceAlerts is enabled and the operator
	// was given no Alertmanager (--alertmanager-url).
	ReasonNoAlertmanager = "NoAlertmanager"
	// ReasonFailureBudgetExceeded (Progressing=False, Succeeded=False): more clusters failed
	// or timed out than spec.maxFailures allows; no new batch started.
	ReasonFailureBudgetExceeded = "FailureBudgetExceeded"
	// ReasonWaitingForOtherUpgrade (Progressing=True): a cluster of the current batch is
	// being remediated by another ClusterGroupUpgrade; it starts once that one is done with
	// it. The message names the other one.
	ReasonWaitingForOtherUpgrade = "WaitingForOtherUpgrade"
	// ReasonHubCapacityReached (Progressing=True): the hub-wide cap on clusters under
	// remediation (--max-clusters-in-progress) keeps clusters of the batch from starting.
	ReasonHubCapacityReached = "HubCapacityReached"
	// ReasonManagedPolicyChanged (Progressing=True): a managed policy changed since the
	// rollout accepted it; the next batch waits until approved (kubectl cgu approve), which
	// accepts the change.
	ReasonManagedPolicyChanged = "ManagedPolicyChanged"
	// ReasonInProgress (Progressing=True, Succeeded=False, PrecachingSucceeded=False): work
	// is under way.
	ReasonInProgress = "InProgress"
	// ReasonCompleted (Progressing=False, Succeeded=True): every cluster completed.
	ReasonCompleted = "Completed"
	// ReasonClustersHeld (UpgradeChecked=False; Succeeded=False with state Completed): the
	// upgrade checks hold some clusters; the rollout ends Completed once the others did.
	ReasonClustersHeld = "ClustersHeld"
	// ReasonClustersFailed (Progressing=False, Succeeded=False, state TimedOut): clusters
	// failed, for example the health check after their upgrade.
	ReasonClustersFailed = "ClustersFailed"
	// ReasonVerifying (on an InProgress cluster): the cluster completed its policies and
	// waits for the health check after its upgrade.
	ReasonVerifying = "Verifying"
	// ReasonUpgradeChecksPassed (UpgradeChecked=True): every cluster may proceed.
	ReasonUpgradeChecksPassed = "UpgradeChecksPassed"
	// ReasonUpgradeChecksPending (UpgradeChecked=Unknown): ClusterVersions are still being
	// read.
	ReasonUpgradeChecksPending = "UpgradeChecksPending"
	// ReasonForbidden (Reconciled=False): the API server refused one of the operator's
	// reads or writes (RBAC); the message names it.
	ReasonForbidden = "Forbidden"
	// ReasonObjectNotFound (Reconciled=False): an object the reconcile needed is gone.
	ReasonObjectNotFound = "ObjectNotFound"
	// ReasonReconcileFailed (Reconciled=False): any other failure; the message says what.
	ReasonReconcileFailed = "ReconcileFailed"
	// ReasonTimedOut (Progressing=False, Succeeded=False): the rollout or a canary batch
	// ran out of time, or a batch timed out with batchTimeoutAction Abort.
	ReasonTimedOut = "TimedOut"
	// ReasonRecordsLost stops a rollout whose batch records were lost (deleted by hand)
	// and could not be rebuilt from its status: it enforces nothing any more.
	ReasonRecordsLost = "RecordsLost"
	// ReasonInvalidClusterActions (Validated=False before the start, Reconciled=False after):
	// spec.actions holds a key or value no ManagedCluster takes; admission refuses these, so
	// only a ClusterGroupUpgrade stored before it did can. After the start the actions do not
	// run and the rest of the pass goes on.
	ReasonInvalidClusterActions = "InvalidClusterActions"
	// ReasonRecordRebuilt marks the clusters of a batch that ended whose record was lost and
	// made again: completed when compliant with every managed policy then, else timed out.
	ReasonRecordRebuilt = "RecordRebuilt"
)

// Annotations of a ClusterGroupUpgrade that kubectl cgu approve writes: the 1-based batch
// approved and who approved it (as a SelfSubjectReview told the plugin). The operator
// records each approval in status.approvals.
const (
	AnnotationApproveBatch = "ran.openshift.io/approve-batch"
	AnnotationApprovedBy   = "ran.openshift.io/approved-by"
)

// AnnotationNameSuffix is TALM's annotation naming the suffix of the objects a rollout
// makes (TALM draws a random one without it): the operator names its Placements,
// PlacementBindings and step ManifestWorks as TALM does with it (status.nameSuffix).
const AnnotationNameSuffix = "cluster-group-upgrades-operator/name-suffix"
