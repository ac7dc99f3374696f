package models

// ClaimSQL is claimSQL, for the tests of its plans.
var ClaimSQL = claimSQL
