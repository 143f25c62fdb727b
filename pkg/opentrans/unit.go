package opentrans

import "strings"

// DefaultUnit is the BMEcat unit code written when a line has no unit or a
// unit the table below does not know: C62 ("one", i.e. piece). The 2005 code
// list has neither H87 nor PCE, which newer UN/ECE lists use for "piece".
const DefaultUnit = "C62"

// unitCodes maps printed units (normalised by normUnit: lower case, trailing
// dots and inner spaces removed) in English, German, French, Spanish,
// Italian and Dutch to a code of the BMEcat 2005 unit list (dtPUNIT, UN/ECE
// Recommendation 20 of 2005). A test checks every
// code against the schema's enumeration.
//
// Codes that look like printed units but mean something else in Rec. 20 are
// mapped on purpose: "st"/"St." is the German Stück, not ST (sheet); "pal" is
// a pallet, not PAL (pascal); "km" has no code in the 2005 list (KMT is
// missing) and is therefore unknown.
var unitCodes = map[string]string{
	// piece
	"c62": "C62", "h87": "C62", "pce": "C62", "pc": "C62", "pcs": "C62", "piece": "C62", "pieces": "C62",
	"ea": "C62", "each": "C62", "unit": "C62", "units": "C62", "st": "C62", "stk": "C62", "stck": "C62",
	"stück": "C62", "stueck": "C62", "stuck": "C62", "nr": "C62", "no": "C62",
	"pièce": "C62", "pièces": "C62", "pc(s)": "C62", "u": "C62", "un": "C62", "unité": "C62", "unite": "C62",
	"unités": "C62", "x": "C62", "einheit": "C62", "einh": "C62", "ez": "C62",
	// mass
	"kg": "KGM", "kgm": "KGM", "kgs": "KGM", "kilo": "KGM", "kilogram": "KGM", "kilogramm": "KGM",
	"kilogramme": "KGM", "g": "GRM", "gr": "GRM", "grm": "GRM", "gram": "GRM", "gramm": "GRM",
	"gramme": "GRM", "mg": "MGM", "mgm": "MGM", "t": "TNE", "to": "TNE", "tne": "TNE", "tonne": "TNE",
	"tonnes": "TNE", "lb": "LBR", "lbs": "LBR", "lbr": "LBR", "oz": "ONZ", "onz": "ONZ",
	// length, area, volume
	"m": "MTR", "mtr": "MTR", "meter": "MTR", "metre": "MTR", "metres": "MTR", "meters": "MTR", "lfm": "MTR",
	"lfdm": "MTR", "lfd.m": "MTR", "mètre": "MTR", "mètres": "MTR", "cm": "CMT", "cmt": "CMT", "mm": "MMT",
	"mmt": "MMT", "ft": "FOT", "fot": "FOT", "in": "INH", "inh": "INH", "yd": "YRD", "yrd": "YRD",
	"m2": "MTK", "m²": "MTK", "qm": "MTK", "sqm": "MTK", "mtk": "MTK", "m3": "MTQ", "m³": "MTQ", "cbm": "MTQ",
	"mtq": "MTQ", "l": "LTR", "lt": "LTR", "ltr": "LTR", "liter": "LTR", "litre": "LTR", "litres": "LTR",
	"liters": "LTR", "ml": "MLT", "mlt": "MLT", "cl": "CLT", "clt": "CLT", "gal": "GLL", "gll": "GLL",
	// packaging
	"pk": "PK", "pck": "PK", "pack": "PK", "packs": "PK", "packung": "PK", "pckg": "PK", "pkg": "PK",
	"pak": "PK", "paket": "PK", "paquet": "PK", "paq": "PK", "vpe": "PK",
	"set": "SET", "sets": "SET", "satz": "SET", "sätze": "SET", "jeu": "SET", "kit": "KT", "kt": "KT",
	"pr": "PR", "pair": "PR", "pairs": "PR", "paar": "PR", "paire": "PR", "paires": "PR",
	"bx": "BX", "box": "BX", "boxes": "BX", "schachtel": "BX", "boîte": "BX", "boite": "BX",
	"ct": "CT", "ctn": "CT", "carton": "CT", "karton": "CT", "krt": "CT", "kart": "CT",
	"ro": "RO", "rl": "RO", "roll": "RO", "rolls": "RO", "rolle": "RO", "rollen": "RO", "rouleau": "RO",
	"bg": "BG", "bag": "BG", "bags": "BG", "beutel": "BG", "sachet": "BG", "sa": "SA", "sack": "SA", "sac": "SA",
	"bo": "BO", "bottle": "BO", "flasche": "BO", "fl": "BO", "bouteille": "BO", "ca": "CA", "can": "CA",
	"dose": "CA", "tu": "TU", "tube": "TU", "dr": "DR", "drum": "DR", "fass": "DR", "fût": "DR",
	"pf": "PF", "pallet": "PF", "palette": "PF", "pal": "PF", "dzn": "DZN", "dz": "DZN", "dozen": "DZN",
	"dutzend": "DZN", "douzaine": "DZN",
	// time and energy
	"h": "HUR", "hr": "HUR", "hrs": "HUR", "hur": "HUR", "hour": "HUR", "hours": "HUR", "std": "HUR",
	"stunde": "HUR", "stunden": "HUR", "heure": "HUR", "heures": "HUR", "min": "MIN", "minute": "MIN",
	"minuten": "MIN", "minutes": "MIN", "day": "DAY", "days": "DAY", "tag": "DAY", "tage": "DAY", "jour": "DAY",
	"jours": "DAY", "wee": "WEE", "week": "WEE", "woche": "WEE", "mon": "MON", "month": "MON", "monat": "MON",
	"mois": "MON", "ann": "ANN", "year": "ANN", "jahr": "ANN", "kwh": "KWH",
	// Spanish, Italian and Dutch (issue 28: an unknown unit is no longer
	// written as pieces but deferred, so the common spellings of the
	// languages docintake reads must be known); English and French extras.
	"ud": "C62", "uds": "C62", "unidad": "C62", "unidades": "C62", "pieza": "C62", "piezas": "C62", "pza": "C62",
	"pz": "C62", "pezzo": "C62", "pezzi": "C62", "stuk": "C62", "stuks": "C62", "nos": "C62",
	"caja": "BX", "cajas": "BX", "scatola": "BX", "scatole": "BX", "doos": "BX",
	"cs": "CS", "case": "CS", "cases": "CS", "caisse": "CS", "caisses": "CS",
	"cartons": "CT", "ctns": "CT", "cartone": "CT", "cartoni": "CT",
	"pkt": "PK", "paquete": "PK", "paquetes": "PK", "conf": "PK", "confezione": "PK", "confezioni": "PK",
	"rollo": "RO", "rollos": "RO", "rotolo": "RO", "rotoli": "RO", "rol": "RO",
	"par": "PR", "pares": "PR", "paio": "PR", "paia": "PR",
	"juego": "SET", "juegos": "SET",
	"lot": "LO", "lots": "LO", "lote": "LO", "lotes": "LO", "lotto": "LO",
	"bolsa": "BG", "bolsas": "BG", "sacchetto": "BG", "zak": "BG",
	"botella": "BO", "botellas": "BO", "bottiglia": "BO", "bottiglie": "BO", "fles": "BO",
	"docena": "DZN", "docenas": "DZN", "dozzina": "DZN",
	"metro": "MTR", "metros": "MTR", "metri": "MTR", "litro": "LTR", "litros": "LTR", "litri": "LTR",
	"kilogramo": "KGM", "kilogramos": "KGM", "chilo": "KGM", "chilogrammo": "KGM", "gramo": "GRM", "gramos": "GRM",
	"hora": "HUR", "horas": "HUR", "ora": "HUR", "ore": "HUR", "uur": "HUR",
	// Rec 20 deprecated its package codes in favour of "X" + the Rec 21
	// code of the same package (BX box → XBX); newer documents (Order-X,
	// UBL) send these, the 2005 list has only the older code.
	"xbx": "BX", "xct": "CT", "xcs": "CS", "xpk": "PK", "xbg": "BG", "xbo": "BO", "xro": "RO", "xsa": "SA",
	"xtu": "TU", "xdr": "DR", "xca": "CA",
}

// UnitCode maps a unit as printed on an order ("Stk.", "pcs", "kg", "Rolle")
// to a BMEcat 2005 unit code: first through the table of printed spellings,
// then by accepting a value that already is a code of the 2005 list ("NAR",
// "PA"; upper case as printed). ok is false when the unit is unknown; the
// code is then DefaultUnit. An empty unit gives DefaultUnit with ok true: a
// line without a unit counts pieces.
func UnitCode(printed string) (code string, ok bool) {
	n := normUnit(printed)
	if n == "" {
		return DefaultUnit, true
	}
	if c, ok := unitCodes[n]; ok {
		return c, true
	}
	if c := strings.TrimSpace(printed); unitList[c] {
		return c, true
	}
	return DefaultUnit, false
}

// UnitKey is the form in which printed units are compared: lower case,
// white space removed, trailing dots trimmed ("Stk." and "STK" are one
// unit). Client unit tables are keyed by it too.
func UnitKey(printed string) string { return normUnit(printed) }

// IsUnitCode reports whether code is in the BMEcat 2005 unit list, the
// codes ORDER_UNIT may carry.
func IsUnitCode(code string) bool { return unitList[code] }

func normUnit(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), ""))
	return strings.TrimRight(s, ".")
}
