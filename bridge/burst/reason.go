package burst

// Slurm's state reasons (job_state_reason in slurm.h, printed by squeue %r
// and slurmrestd's state_reason) that mean "the job's QOS group limit on a
// GRES is reached". Only these make a job a burst candidate:
//   - QOSGrpGRES: the QOS's GrpTRES=gres/gpu:TYPE=N (the tenant quota) is in
//     use by the tenant's running jobs;
//   - QOSGrpGRESRunMinutes: GrpTRESRunMins on a GRES is reached;
//   - QOSGrpGRESMinutes: GrpTRESMins on a GRES is used up.
//
// Not candidates, although they name a QOS and a GRES: QOSMaxGRESPerJob,
// QOSMaxGRESPerNode, QOSMaxGRESPerUser, QOSMaxGRESPerAccount,
// QOSMaxGRESMinutesPerJob and QOSMinGRES are per-job or per-user policies,
// not a full reserved share; on-demand capacity would not make them true.
// Assoc* reasons come from the association, not from the tenant QOS.
var quotaReasons = map[string]bool{
	"QOSGrpGRES":           true,
	"QOSGrpGRESRunMinutes": true,
	"QOSGrpGRESMinutes":    true,
}

// IsQuotaHold reports whether a pending job's state reason is a QOS group
// limit on a GRES (see quotaReasons).
func IsQuotaHold(reason string) bool { return quotaReasons[reason] }

// Reason is why a pending job of a tenant was not moved.
type Reason string

// Refusals: the job is held by its tenant's quota but stays pending. These
// are stored and shown by `gpubridge show burst`.
const (
	// OptedOut: the job's comment carries the noburst token, or the job
	// asked for a QOS other than its tenant's.
	OptedOut Reason = "opted-out"
	// Disabled: the tenant's burst policy is off.
	Disabled Reason = "disabled"
	// Cap: moving the job would put the tenant over its on-demand GPU cap.
	Cap Reason = "cap"
	// Budget: the job's estimated cost would put the tenant's on-demand
	// spend this month (booked + estimated in flight) over its budget.
	Budget Reason = "budget"
	// NoRate: the tenant has a budget but one of the job's GPU types has no
	// on-demand rate, so its cost cannot be estimated; never priced at zero.
	NoRate Reason = "no-rate"
	// Deferred: the cycle reached its move limit; the job is considered
	// again next cycle.
	Deferred Reason = "deferred"
	// MoveFailed: slurmctld refused the move (the job started or ended
	// meanwhile, or its association may not use the on-demand QOS).
	MoveFailed Reason = "move-failed"
)

// Ignored: the job is not a burst candidate at all. Counted, not stored.
const (
	// NotOurs: the job's account is not a gpubridge tenant.
	NotOurs Reason = "not-ours"
	// NotQuotaHeld: the job pends for another reason (priority, resources,
	// a hold, another limit), or its tenant's quota has room now.
	NotQuotaHeld Reason = "not-quota-held"
	// NoGPU: the job asks for no typed GPU.
	NoGPU Reason = "no-gpu"
)

// Refusals lists the stored refusal reasons, in display order.
var Refusals = []Reason{OptedOut, Disabled, Cap, Budget, NoRate, Deferred, MoveFailed}

// IsRefusal reports whether r is a stored refusal (not an Ignored reason).
func (r Reason) IsRefusal() bool {
	for _, x := range Refusals {
		if r == x {
			return true
		}
	}
	return false
}
