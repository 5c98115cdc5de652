package money

import (
	"fmt"
	"regexp"
)

// Currency is a currency and the number of digits of its minor unit: the
// decimals every amount in it has.
type Currency struct {
	// Code is the ISO 4217 code (EUR); empty for an amount whose currency
	// is not known yet.
	Code string
	// Minor is the digits of the minor unit (EUR 2, JPY 0, KWD 3). For an
	// amount without a currency, the decimals it was written with.
	Minor int
}

// MaxMinor is the most minor-unit digits a currency (or a currency-less
// amount) may have.
const MaxMinor = 6

func (c Currency) String() string {
	if c.Code == "" {
		return "(no currency)"
	}
	return c.Code
}

var codeRe = regexp.MustCompile(`^[A-Z]{3}$`)

// ISO returns the ISO 4217 currency of code. ok is false for a code that is
// not in the list, and for the codes without a minor unit (gold XAU, the
// SDR XDR, the test code XTS, ...): their amounts cannot be counted in minor
// units, so a rate card in one must say its minor units itself.
func ISO(code string) (Currency, bool) {
	m, ok := iso4217[code]
	if !ok || m < 0 {
		return Currency{}, false
	}
	return Currency{Code: code, Minor: int(m)}, true
}

// Lookup returns the currency of code: minor digits override the ISO 4217
// exponent when not nil (a card's minorUnits). It refuses a code that is
// not three capital letters, an unknown code or one without a minor unit
// when minor is nil, and minor digits outside 0..MaxMinor.
func Lookup(code string, minor *int) (Currency, error) {
	if !codeRe.MatchString(code) {
		return Currency{}, fmt.Errorf("%q is not an ISO 4217 currency code such as EUR, USD or JPY", code)
	}
	if minor != nil {
		if *minor < 0 || *minor > MaxMinor {
			return Currency{}, fmt.Errorf("minor units %d: want 0 to %d", *minor, MaxMinor)
		}
		return Currency{Code: code, Minor: *minor}, nil
	}
	c, ok := ISO(code)
	if !ok {
		if m, listed := iso4217[code]; listed && m < 0 {
			return Currency{}, fmt.Errorf("%s has no minor unit in ISO 4217; give its minor units explicitly", code)
		}
		return Currency{}, fmt.Errorf("%s is not an ISO 4217 currency this gpubridge knows; check the code, or give its minor units explicitly", code)
	}
	return c, nil
}

// iso4217 is ISO 4217's list one (current currencies and funds, as of
// 2025) with each code's minor unit; -1 marks the codes whose minor unit is
// "N.A.". Codes withdrawn since 2023 (HRK, SLL, ZWL, ANG until its end)
// stay readable for old cards. TestISO4217 checks the exceptions to 2.
var iso4217 = map[string]int8{
	"AED": 2, "AFN": 2, "ALL": 2, "AMD": 2, "ANG": 2, "AOA": 2, "ARS": 2, "AUD": 2, "AWG": 2, "AZN": 2,
	"BAM": 2, "BBD": 2, "BDT": 2, "BGN": 2, "BHD": 3, "BIF": 0, "BMD": 2, "BND": 2, "BOB": 2, "BOV": 2,
	"BRL": 2, "BSD": 2, "BTN": 2, "BWP": 2, "BYN": 2, "BZD": 2,
	"CAD": 2, "CDF": 2, "CHE": 2, "CHF": 2, "CHW": 2, "CLF": 4, "CLP": 0, "CNY": 2, "COP": 2, "COU": 2,
	"CRC": 2, "CUP": 2, "CVE": 2, "CZK": 2,
	"DJF": 0, "DKK": 2, "DOP": 2, "DZD": 2,
	"EGP": 2, "ERN": 2, "ETB": 2, "EUR": 2,
	"FJD": 2, "FKP": 2,
	"GBP": 2, "GEL": 2, "GHS": 2, "GIP": 2, "GMD": 2, "GNF": 0, "GTQ": 2, "GYD": 2,
	"HKD": 2, "HNL": 2, "HRK": 2, "HTG": 2, "HUF": 2,
	"IDR": 2, "ILS": 2, "INR": 2, "IQD": 3, "IRR": 2, "ISK": 0,
	"JMD": 2, "JOD": 3, "JPY": 0,
	"KES": 2, "KGS": 2, "KHR": 2, "KMF": 0, "KPW": 2, "KRW": 0, "KWD": 3, "KYD": 2, "KZT": 2,
	"LAK": 2, "LBP": 2, "LKR": 2, "LRD": 2, "LSL": 2, "LYD": 3,
	"MAD": 2, "MDL": 2, "MGA": 2, "MKD": 2, "MMK": 2, "MNT": 2, "MOP": 2, "MRU": 2, "MUR": 2, "MVR": 2,
	"MWK": 2, "MXN": 2, "MXV": 2, "MYR": 2, "MZN": 2,
	"NAD": 2, "NGN": 2, "NIO": 2, "NOK": 2, "NPR": 2, "NZD": 2,
	"OMR": 3,
	"PAB": 2, "PEN": 2, "PGK": 2, "PHP": 2, "PKR": 2, "PLN": 2, "PYG": 0,
	"QAR": 2,
	"RON": 2, "RSD": 2, "RUB": 2, "RWF": 0,
	"SAR": 2, "SBD": 2, "SCR": 2, "SDG": 2, "SEK": 2, "SGD": 2, "SHP": 2, "SLE": 2, "SLL": 2, "SOS": 2,
	"SRD": 2, "SSP": 2, "STN": 2, "SVC": 2, "SYP": 2, "SZL": 2,
	"THB": 2, "TJS": 2, "TMT": 2, "TND": 3, "TOP": 2, "TRY": 2, "TTD": 2, "TWD": 2, "TZS": 2,
	"UAH": 2, "UGX": 0, "USD": 2, "USN": 2, "UYI": 0, "UYU": 2, "UYW": 4, "UZS": 2,
	"VED": 2, "VES": 2, "VND": 0, "VUV": 0,
	"WST": 2,
	"XAF": 0, "XCD": 2, "XCG": 2, "XOF": 0, "XPF": 0,
	"YER": 2,
	"ZAR": 2, "ZMW": 2, "ZWG": 2, "ZWL": 2,
	// No minor unit.
	"XAG": -1, "XAU": -1, "XBA": -1, "XBB": -1, "XBC": -1, "XBD": -1, "XDR": -1, "XPD": -1, "XPT": -1,
	"XSU": -1, "XTS": -1, "XUA": -1, "XXX": -1,
}
