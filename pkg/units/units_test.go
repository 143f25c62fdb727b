package units_test

import (
	"math/big"
	"testing"

	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/units"
	"github.com/stretchr/testify/require"
)

// The built-in spellings, with the code UN/ECE Recommendation 20 ("Codes for
// Units of Measure Used in International Trade", Annexes I–III) gives the
// unit, restricted to the BMEcat 2005 list that openTRANS 2.1 ORDER_UNIT
// (dtPUNIT) enumerates: Rec 20's H87 "piece" and the older PCE are not in
// that list, so pieces are C62 "one" (DESIGN.md); EA "each" is written C62 as
// well. The package codes (BX box, CT carton, CS case, PK pack, RO roll, BG
// bag, BO bottle, LO lot) are Rec 20's older codes of the Rec 21 packages,
// which newer documents send as X + the Rec 21 code (XBX).
func TestBuiltinSpellings(t *testing.T) {
	t.Parallel()
	want := map[string][]string{
		"C62": {"C62", "PCE", "H87", "EA", "ea", "each", "pcs", "pc", "piece", "unit", "units", "ST", "St.", "Stk", "Stk.",
			"Stück", "stuk", "stuks", "pièce", "unité", "U", "ud", "uds", "unidad", "pieza", "pz", "pezzo", "pezzi", "nr", "NOS"},
		"KGM": {"KGM", "kg", "KG", "kilo", "Kilogramm", "kilogramo", "chilo"},
		"GRM": {"g", "gr", "Gramm", "gramo"},
		"MTR": {"MTR", "m", "M", "meter", "mètre", "metro", "metri", "lfm"},
		"LTR": {"LTR", "l", "Liter", "litre", "litro", "litri"},
		"CS":  {"CS", "cs", "case", "cases", "caisse", "XCS"},
		"CT":  {"CT", "ctn", "carton", "Karton", "cartone", "XCT"},
		"PK":  {"PK", "pack", "Pkg.", "Packung", "paquet", "paquete", "conf", "confezione", "pak", "XPK"},
		"BX":  {"BX", "box", "Schachtel", "boîte", "caja", "scatola", "doos", "XBX"},
		"SET": {"SET", "set", "Satz", "jeu", "juego"},
		"PR":  {"PR", "pair", "Paar", "paire", "par", "paio"},
		"RO":  {"RO", "RL", "roll", "Rolle", "rouleau", "rollo", "rotolo", "rol", "XRO"},
		"LO":  {"lot", "lote", "lotto"},
		"DZN": {"DZN", "dozen", "Dutzend", "douzaine", "docena", "dozzina"},
		"BG":  {"bag", "Beutel", "sachet", "bolsa", "zak"},
		"BO":  {"bottle", "Flasche", "bouteille", "botella", "bottiglia", "fles"},
		"HUR": {"h", "Std.", "hour", "heure", "hora", "ora", "uur"},
	}
	for code, spellings := range want {
		require.True(t, opentrans.IsUnitCode(code), "%s is in the BMEcat 2005 list", code)
		for _, s := range spellings {
			o := &order.Order{Items: []order.Item{{Position: "1", Quantity: "3", Unit: s, UnitPrice: "2.00", LineAmount: "6.00"}}}
			missing, err := units.Apply(o, nil)
			require.NoError(t, err)
			require.Empty(t, missing, "%q is a known spelling", s)
			it := o.Items[0]
			require.Equal(t, code, it.Unit, "%q", s)
			require.Equal(t, "3", it.Quantity, "a spelling is no conversion: %q", s)
			require.Equal(t, "2.00", it.UnitPrice)
			require.Empty(t, it.Remarks)
			if s == code {
				require.Nil(t, it.AsPrinted, "a code as printed needs no record")
			} else {
				require.Equal(t, &order.PrintedUnit{Quantity: "3", Unit: s, UnitPrice: "2.00", Factor: "1", Table: units.TableBuiltin},
					it.AsPrinted, "%q", s)
			}
		}
	}
}

// A unit neither table knows is not guessed: nothing changes and every such
// line is named, so that one deferral says everything to add.
func TestUnknownUnitsUnresolved(t *testing.T) {
	t.Parallel()
	o := &order.Order{Items: []order.Item{
		{Position: "10", Quantity: "2", Unit: "Bund"},
		{Position: "20", Quantity: "3", Unit: "Stk"},
		{Position: "30", Quantity: "1", Unit: "km"}, // KMT is not in the 2005 list
		{Position: "40", Quantity: "5"},             // none printed: left as it is
	}}
	before := cloneItems(o.Items)
	missing, err := units.Apply(o, nil)
	require.NoError(t, err)
	require.Equal(t, units.Unresolved{{Line: 1, Position: "10", Unit: "Bund"}, {Line: 3, Position: "30", Unit: "km"}}, missing)
	require.Equal(t, before, o.Items, "nothing is converted while a unit is unknown")
	require.Contains(t, missing.Detail(), `"Bund" (line 1, position 10), "km" (line 3, position 30)`)

	// The client's table resolves them; a line without a unit stays without.
	km, err := units.NewRule("km", "", "MTR", "1000")
	require.NoError(t, err)
	bund, err := units.NewRule("Bund", "", "BE", "")
	require.NoError(t, err)
	missing, err = units.Apply(o, []units.Rule{km, bund})
	require.NoError(t, err)
	require.Empty(t, missing)
	require.Equal(t, []string{"BE", "C62", "MTR", ""}, []string{o.Items[0].Unit, o.Items[1].Unit, o.Items[2].Unit, o.Items[3].Unit})
	require.Equal(t, "1000", o.Items[2].Quantity)
	require.Nil(t, o.Items[3].AsPrinted)
}

// The example: the buyer orders cases of 12, the supplier sells
// pieces. 2 CS at 120.00 (line 240.00) are 24 pieces at 10.00; the line
// amount is what the buyer pays and stays.
func TestCaseOfTwelve(t *testing.T) {
	t.Parallel()
	cs, err := units.NewRule("CS", "", "PCE", "12")
	require.NoError(t, err)
	require.Equal(t, units.Rule{Unit: "CS", Code: "C62", Factor: "12"}, cs, "PCE is written C62 (not in the 2005 list)")
	o := &order.Order{Items: []order.Item{{Position: "1", SupplierArticleID: "S-1", Quantity: "2", Unit: "CS",
		UnitPrice: "120.00", LineAmount: "240.00"}}}
	missing, err := units.Apply(o, []units.Rule{cs})
	require.NoError(t, err)
	require.Empty(t, missing)
	it := o.Items[0]
	require.Equal(t, "24", it.Quantity)
	require.Equal(t, "C62", it.Unit)
	require.Equal(t, "10.00", it.UnitPrice)
	require.Empty(t, it.PriceBasisQuantity)
	require.Equal(t, "240.00", it.LineAmount)
	require.Equal(t, &order.PrintedUnit{Quantity: "2", Unit: "CS", UnitPrice: "120.00", Factor: "12", Table: units.TableClient}, it.AsPrinted)
	require.Equal(t, []string{"Ordered as printed: 2 CS at 120.00; converted by the client's unit table: 1 CS = 12 C62"}, it.Remarks)

	// Applying again changes nothing (a held order approved in review).
	again := cloneItems(o.Items)
	missing, err = units.Apply(o, []units.Rule{cs})
	require.NoError(t, err)
	require.Empty(t, missing)
	require.Equal(t, again, o.Items)
}

// Every conversion keeps quantity × unit price ÷ price basis exactly; where
// the price divided by the factor is no short exact decimal, the printed
// price stays and its price basis grows by the factor (the price of 12
// pieces), so nothing is rounded.
func TestConversionKeepsTheLineAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		qty, price, basis, factor string
		wantQty, wantPrice, wantB string
	}{
		{"divides evenly", "2", "120.00", "", "12", "24", "10.00", ""},
		{"a third", "3", "100.00", "", "12", "36", "100.00", "12"},
		{"more places than printed", "4", "1.00", "", "8", "32", "0.125", ""},
		{"printed price basis", "500", "2.50", "100", "0.001", "0.5", "2500.00", "100"},
		{"fractional quantity", "2.5", "60.00", "", "12", "30.0", "5.00", ""},
		{"basis and no exact price", "7", "10.00", "10", "3", "21", "10.00", "30"},
		{"places kept", "1.50", "9.99", "", "2", "3.00", "4.995", ""},
		{"no price", "2", "", "", "6", "12", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := units.NewRule("CS", "", "C62", tt.factor)
			require.NoError(t, err)
			o := &order.Order{Items: []order.Item{{Position: "1", Quantity: tt.qty, Unit: "CS", UnitPrice: tt.price,
				PriceBasisQuantity: tt.basis, LineAmount: "123.45"}}}
			_, err = units.Apply(o, []units.Rule{r})
			require.NoError(t, err)
			it := o.Items[0]
			require.Equal(t, []string{tt.wantQty, tt.wantPrice, tt.wantB}, []string{it.Quantity, it.UnitPrice, it.PriceBasisQuantity})
			require.Equal(t, "123.45", it.LineAmount, "the line amount is never touched")
			if tt.price != "" {
				require.Zero(t, value(tt.qty, tt.price, tt.basis).Cmp(value(it.Quantity, it.UnitPrice, it.PriceBasisQuantity)),
					"quantity × price ÷ basis is unchanged")
			}
		})
	}
}

// The client's table wins over the built-in spellings, and a row for the
// line's article over the row for every article (supplier's article number
// first, then the buyer's).
func TestClientTablePrecedence(t *testing.T) {
	t.Parallel()
	rule := func(unit, article, code, factor string) units.Rule {
		r, err := units.NewRule(unit, article, code, factor)
		require.NoError(t, err)
		return r
	}
	rules := []units.Rule{rule("Karton", "", "C62", "12"), rule("karton", "s-7", "C62", "24"), rule("KARTON.", "B 9", "C62", "6"),
		rule("ST", "", "ST", "1")}
	o := &order.Order{Items: []order.Item{
		{Position: "1", SupplierArticleID: "S-1", Quantity: "1", Unit: "Karton"},
		{Position: "2", SupplierArticleID: "S-7", BuyerArticleID: "B 9", Quantity: "1", Unit: "Karton"},
		{Position: "3", BuyerArticleID: "b  9", Quantity: "1", Unit: "Karton"},
		{Position: "4", Quantity: "1", Unit: "ST"},   // the client's sheets, not the built-in Stück
		{Position: "5", Quantity: "1", Unit: "Stk."}, // built-in
	}}
	missing, err := units.Apply(o, rules)
	require.NoError(t, err)
	require.Empty(t, missing)
	got := make([][2]string, len(o.Items))
	for i, it := range o.Items {
		got[i] = [2]string{it.Quantity, it.Unit}
	}
	require.Equal(t, [][2]string{{"12", "C62"}, {"24", "C62"}, {"6", "C62"}, {"1", "ST"}, {"1", "C62"}}, got)
	require.Nil(t, o.Items[3].AsPrinted, "printed as the client's code: nothing to record")
	require.Equal(t, units.TableBuiltin, o.Items[4].AsPrinted.Table)
	require.Equal(t, []string{"karton", "st", "stk"}, units.Keys(&order.Order{Items: []order.Item{{Unit: "Karton"}, {Unit: "KARTON"},
		{Unit: "ST"}, {Unit: " Stk. "}, {Unit: ""}}}))
}

func TestNewRule(t *testing.T) {
	t.Parallel()
	r, err := units.NewRule(" Pal. ", " A-1 ", "XPK", "")
	require.NoError(t, err)
	require.Equal(t, units.Rule{Unit: "Pal.", Article: "A-1", Code: "PK", Factor: "1"}, r)
	r, err = units.NewRule("g", "", "kg", "+0.0010")
	require.NoError(t, err)
	require.Equal(t, units.Rule{Unit: "g", Code: "KGM", Factor: "0.0010"}, r)
	for _, bad := range [][4]string{{"", "", "C62", "1"}, {"CS", "", "", "12"}, {"CS", "", "piece of 12", "12"},
		{"CS", "", "C62", "0"}, {"CS", "", "C62", "-12"}, {"CS", "", "C62", "1,5"}, {"CS", "", "C62", "1e3"}} {
		_, err := units.NewRule(bad[0], bad[1], bad[2], bad[3])
		require.Error(t, err, "%q", bad)
	}
}

func value(q, p, b string) *big.Rat {
	v := new(big.Rat).Mul(order.Rat(q), order.Rat(p))
	if r := order.Rat(b); r != nil && r.Sign() != 0 {
		v.Quo(v, r)
	}
	return v
}

func cloneItems(items []order.Item) []order.Item {
	out := make([]order.Item, len(items))
	for i, it := range items {
		out[i] = it
		out[i].Remarks = append([]string(nil), it.Remarks...)
		if it.AsPrinted != nil {
			p := *it.AsPrinted
			out[i].AsPrinted = &p
		}
	}
	return out
}
