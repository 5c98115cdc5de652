package tenant

// storeOnlyFields are the fields (FieldChange.Title) that no Slurm object
// and no line of the job_submit guard's table is made from: the booking
// policy (read from the store by bridge/reserve at each booking) and the
// burst policy (read by the burst controller at each pass).
var storeOnlyFields = map[string]bool{"Booking": true, "Burst": true, "BurstMaxGPUs": true, "BurstBudget": true}

// PolicyOnly reports whether the changes cs touch only policy that
// gpubridge reads from its store, so that `gpubridge apply` has nothing to
// do in Slurm for them (false for no changes).
func PolicyOnly(cs []FieldChange) bool {
	for _, c := range cs {
		if !storeOnlyFields[c.Title] {
			return false
		}
	}
	return len(cs) > 0
}
