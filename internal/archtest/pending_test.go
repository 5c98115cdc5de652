package archtest

// pendingLong are the functions over MaxFuncLines that are being split
// (issue 26); the list only shrinks, and goes once it is empty.
var pendingLong = []string{
	"bridge/health/check/dcgm.go:parseDCGMTable",
	"bridge/health/check/nccl.go:parseNCCL",
	"bridge/health/check/nvbandwidth.go:parseNVBandwidth",
	"bridge/health/check/smi.go:parseSMI",
	"bridge/health/service.go:Service.harvestRun",
	"bridge/health/trigger.go:Service.Trigger",
	"bridge/reserve/calendar.go:Settings.commitments",
	"bridge/reserve/capacity.go:Settings.Capacities",
	"bridge/reserve/project.go:Settings.PlanProjection",
	"bridge/reserve/projector.go:Projector.Project",
	"gres/conf/render.go:Render",
	"gres/inventory/inventory.go:Inventory.Validate",
}
