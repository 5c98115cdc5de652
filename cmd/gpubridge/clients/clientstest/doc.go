// Package clientstest has fakes of what a clients.Set connects to, for
// unit tests of the daemon's lifecycle: a database whose pools answer
// Ping (and can be taken down), and an httptest slurmrestd that answers
// the version negotiation and ping for one accepted token.
//
// Only tests import it.
package clientstest
