package pogen

// product is an article with its name in en, de, fr, nl, es, it and a few
// language-neutral specifications; price range in the document currency's
// minor magnitude (lo, hi in whole units).
type product struct {
	names  [6]string
	specs  []string
	lo, hi float64
}

var products = []product{
	{[6]string{"Hex bolt", "Sechskantschraube", "Vis hexagonale", "Zeskantbout", "Tornillo hexagonal", "Vite esagonale"}, []string{"M8x40 DIN 933 8.8", "M10x60 ISO 4017", "M12x80 A2-70"}, 0.05, 2},
	{[6]string{"Washer", "Unterlegscheibe", "Rondelle", "Sluitring", "Arandela", "Rondella"}, []string{"DIN 125 8.4", "ISO 7089 M10"}, 0.01, 0.5},
	{[6]string{"Cable tie", "Kabelbinder", "Collier de serrage", "Kabelbinder", "Brida", "Fascetta"}, []string{"300x4.8 UV", "200x3.6"}, 0.02, 0.3},
	{[6]string{"Safety gloves nitrile", "Schutzhandschuhe Nitril", "Gants de protection nitrile", "Veiligheidshandschoenen nitril", "Guantes de seguridad nitrilo", "Guanti di protezione nitrile"}, []string{"EN 388 9/L", "EN 374 10/XL"}, 1.5, 9},
	{[6]string{"Stretch film", "Stretchfolie", "Film étirable", "Rekfolie", "Film estirable", "Film estensibile"}, []string{"500 mm x 300 m 23 µm"}, 8, 30},
	{[6]string{"Ball bearing", "Rillenkugellager", "Roulement à billes", "Kogellager", "Rodamiento de bolas", "Cuscinetto a sfere"}, []string{"6204-2RS", "6305-ZZ", "6002-2RS C3"}, 2, 40},
	{[6]string{"Hydraulic hose", "Hydraulikschlauch", "Flexible hydraulique", "Hydraulische slang", "Manguera hidráulica", "Tubo idraulico"}, []string{"DN10 1500 mm 250 bar 2SN"}, 20, 120},
	{[6]string{"Thermal label roll", "Thermoetiketten", "Étiquettes thermiques", "Thermische etiketten", "Etiquetas térmicas", "Etichette termiche"}, []string{"100x150 mm 500/roll"}, 3, 15},
	{[6]string{"Corrugated box", "Wellpappkarton", "Carton ondulé", "Golfkartonnen doos", "Caja de cartón ondulado", "Scatola in cartone ondulato"}, []string{"600x400x400 BC", "400x300x200 B"}, 0.4, 4},
	{[6]string{"Spray paint", "Sprühlack", "Peinture aérosol", "Spuitlak", "Pintura en spray", "Vernice spray"}, []string{"RAL 7035 400 ml", "RAL 9005 400 ml"}, 4, 14},
	{[6]string{"O-ring", "O-Ring", "Joint torique", "O-ring", "Junta tórica", "O-ring"}, []string{"25x3 NBR 70", "40x2.5 FKM 75"}, 0.05, 1.2},
	{[6]string{"Heat shrink tubing", "Schrumpfschlauch", "Gaine thermorétractable", "Krimpkous", "Tubo termorretráctil", "Guaina termorestringente"}, []string{"12/4 mm RD", "6/2 mm BK"}, 0.3, 3},
	{[6]string{"Twist drill HSS", "Spiralbohrer HSS", "Foret HSS", "Spiraalboor HSS", "Broca HSS", "Punta elicoidale HSS"}, []string{"Ø 8.5 mm DIN 338", "Ø 4.2 mm DIN 338"}, 0.8, 12},
	{[6]string{"Copper cable", "Kupferkabel", "Câble cuivre", "Koperkabel", "Cable de cobre", "Cavo in rame"}, []string{"H07V-K 2.5 mm²", "NYM-J 3x1.5 mm²"}, 0.3, 4},
	{[6]string{"Euro pallet", "Europalette", "Palette Europe", "Europallet", "Palé europeo", "Pallet EPAL"}, []string{"1200x800 EPAL"}, 8, 25},
	{[6]string{"Adhesive tape", "Klebeband", "Ruban adhésif", "Plakband", "Cinta adhesiva", "Nastro adesivo"}, []string{"50 mm x 66 m PP"}, 0.8, 5},
	{[6]string{"Pneumatic push-in fitting", "Pneumatik-Steckverschraubung", "Raccord pneumatique", "Pneumatische koppeling", "Racor neumático", "Raccordo pneumatico"}, []string{"G1/4 - 8 mm", "G1/8 - 6 mm"}, 0.9, 8},
	{[6]string{"Gear motor", "Getriebemotor", "Motoréducteur", "Tandwielmotor", "Motorreductor", "Motoriduttore"}, []string{"0.75 kW i=20 400V", "1.5 kW i=40 400V"}, 250, 1900},
	{[6]string{"Filter cartridge", "Filterpatrone", "Cartouche filtrante", "Filterpatroon", "Cartucho filtrante", "Cartuccia filtrante"}, []string{"10 µm 250 mm", "25 µm 500 mm"}, 6, 60},
	{[6]string{"Toner cartridge", "Tonerkartusche", "Cartouche de toner", "Tonercartridge", "Cartucho de tóner", "Cartuccia toner"}, []string{"TN-2420 BK", "CF259X"}, 35, 160},
	{[6]string{"Copy paper", "Kopierpapier", "Papier copieur", "Kopieerpapier", "Papel de copia", "Carta per fotocopie"}, []string{"A4 80 g/m²", "A3 80 g/m²"}, 2.5, 9},
	{[6]string{"Stainless steel sheet", "Edelstahlblech", "Tôle inox", "RVS plaat", "Chapa de acero inoxidable", "Lamiera inox"}, []string{"1.4301 2x1000x2000", "1.4404 1.5x1250x2500"}, 90, 480},
	{[6]string{"Aluminium profile", "Aluminiumprofil", "Profilé aluminium", "Aluminium profiel", "Perfil de aluminio", "Profilo in alluminio"}, []string{"40x40 B-type 6 m", "30x30 I-type 6 m"}, 18, 90},
	{[6]string{"Work jacket", "Arbeitsjacke", "Veste de travail", "Werkjas", "Chaqueta de trabajo", "Giacca da lavoro"}, []string{"EN ISO 13688 L", "EN ISO 13688 XL"}, 25, 85},
}

// indianProducts and apparelProducts exist only in English: the Indian
// industrial and the apparel-sourcing families of real POs. Indian prices are
// in rupees already.
var indianProducts = []product{
	{names: [6]string{"MS Angle"}, specs: []string{"50x50x6 mm IS 2062", "65x65x8 mm IS 2062"}, lo: 55, hi: 90},
	{names: [6]string{"HDPE pipe"}, specs: []string{"63 mm PN6", "110 mm PN10"}, lo: 120, hi: 900},
	{names: [6]string{"Copper wire FRLS"}, specs: []string{"2.5 sq mm 90 m coil", "4 sq mm 90 m coil"}, lo: 1500, hi: 4200},
	{names: [6]string{"Cement OPC 53 grade"}, specs: []string{"50 kg bag"}, lo: 350, hi: 450},
	{names: [6]string{"Gate valve CI flanged"}, specs: []string{"2\" PN16", "4\" PN16"}, lo: 1800, hi: 9500},
	{names: [6]string{"Bearing housing"}, specs: []string{"UCP 208", "UCF 210"}, lo: 450, hi: 1600},
}

var apparelProducts = []product{
	{names: [6]string{"Men's polo shirt pique"}, specs: []string{"220 GSM navy", "200 GSM white"}, lo: 3, hi: 9},
	{names: [6]string{"Cotton T-shirt crew neck"}, specs: []string{"180 GSM black", "160 GSM heather grey"}, lo: 1.8, hi: 5},
	{names: [6]string{"Denim jeans slim fit"}, specs: []string{"32/32 indigo", "34/30 stone wash"}, lo: 7, hi: 16},
}

// party is an address block's content.
type party struct {
	name  string
	lines []string
}

// region bundles the conventions of a buyer's country: language, paper,
// currencies, number and date conventions, tax, and address data.
type region struct {
	name      string
	v         *vocab
	weight    int
	letter    bool
	currency  []weighted[currency]
	convs     []weighted[numConv]
	dates     []weighted[string]
	tax       string // sales, vat, gst
	rates     []string
	ids       []weighted[string]
	companies []string
	streets   []string
	cities    []string
	country   string
	people    []string
}

// currency is an ISO code with the symbol printed for it; "" when the code
// is always printed as letters, because a symbol alone would not identify it
// (CHF, and CAD whose "$" reads as USD).
type currency struct{ code, symbol string }

var regions = []*region{
	{name: "us", v: en, weight: 36, letter: true,
		currency: []weighted[currency]{{9, currency{"USD", "$"}}, {1, currency{"CAD", ""}}},
		convs:    []weighted[numConv]{{85, convUS}, {15, convPlain}},
		dates:    []weighted[string]{{55, "MM/DD/YYYY"}, {14, "M/D/YY"}, {6, "MM/DD/YY"}, {8, "Mon DD, YYYY"}, {9, "DD-MON-YY"}, {5, "DD-Mon-YYYY"}, {3, "YYYY-MM-DD"}},
		tax:      "sales", rates: []string{"0", "6.25", "7", "8.25", "0"},
		ids:       []weighted[string]{{55, "digits"}, {20, "prefix"}, {20, "hyphen"}, {5, "slash"}},
		companies: []string{"Great Lakes Tooling Inc.", "Midwest Fastener Supply LLC", "Pacific Coast Packaging Co.", "Summit Industrial Products", "Redwood Electrical Distributors", "Harbor Freightways Corp.", "Blue Ridge Lab Supply", "Keystone Hardware & Tool", "Lone Star Plastics Inc.", "Evergreen Office Solutions"},
		streets:   []string{"4100 Industrial Pkwy", "900 Commerce Dr", "1250 W Lake St", "77 Harbor Blvd, Suite 200", "3800 N Main St", "15 Enterprise Way"},
		cities:    []string{"Toledo, OH 43612", "Fort Wayne, IN 46802", "Portland, OR 97210", "Chicago, IL 60607", "Dallas, TX 75247", "Charlotte, NC 28208", "Reno, NV 89502"},
		country:   "USA",
		people:    []string{"J. Miller", "Sarah Thompson", "Mike O'Connor", "Linda Garcia"}},
	{name: "in", v: en, weight: 20,
		currency: []weighted[currency]{{1, currency{"INR", "Rs."}}},
		convs:    []weighted[numConv]{{60, convLakh}, {20, convUS}, {20, convPlain}},
		dates:    []weighted[string]{{20, "DD-MM-YYYY"}, {20, "DD/MM/YYYY"}, {14, "DD-Mon-YYYY"}, {10, "DD-MON-YY"}, {12, "DD.MM.YYYY"}, {10, "DD-Mon-YY"}, {6, "DD Mon, YYYY"}, {4, "DD/MM/YY"}, {4, "D Month YYYY"}},
		tax:      "gst", rates: []string{"18", "18", "12", "5", "28"},
		ids:       []weighted[string]{{70, "slash"}, {15, "digits"}, {15, "prefix"}},
		companies: []string{"Shree Ganesh Engineering Works", "Bharat Polymers Pvt. Ltd.", "Sai Krishna Traders", "Deccan Fabricators", "Vardhman Steel Industries", "Maruti Electricals & Co.", "Kaveri Packaging Pvt. Ltd.", "Apex Cotton Mills Ltd."},
		streets:   []string{"Plot No. 45, MIDC Bhosari", "Survey No. 112/2, Peenya Industrial Area", "14, GIDC Estate, Phase II", "B-27, Okhla Industrial Area Phase I", "No. 8, SIDCO Industrial Estate"},
		cities:    []string{"Pune - 411026, Maharashtra", "Bengaluru - 560058, Karnataka", "Vapi - 396195, Gujarat", "New Delhi - 110020", "Chennai - 600098, Tamil Nadu", "Ludhiana - 141003, Punjab"},
		country:   "India",
		people:    []string{"Rajesh Kumar", "Priya Sharma", "S. Venkatesh", "Amit Patel"}},
	{name: "uk", v: en, weight: 8,
		currency: []weighted[currency]{{8, currency{"GBP", "£"}}, {2, currency{"EUR", "€"}}},
		convs:    []weighted[numConv]{{85, convUS}, {15, convPlain}},
		dates:    []weighted[string]{{50, "DD/MM/YYYY"}, {20, "D Month YYYY"}, {10, "DD-Mon-YY"}, {10, "DD/MM/YY"}, {10, "DD Mon YYYY"}},
		tax:      "vat", rates: []string{"20"},
		ids:       []weighted[string]{{50, "digits"}, {30, "prefix"}, {20, "hyphen"}},
		companies: []string{"Thames Valley Components Ltd", "Pennine Packaging Ltd", "Clyde Marine Supplies", "Severn Electrical Wholesale", "Albion Office Supplies plc"},
		streets:   []string{"Unit 4, Riverside Park", "12 Mill Lane", "Kelvin House, 22 Station Road"},
		cities:    []string{"Reading RG2 0QX", "Leeds LS11 5DR", "Glasgow G51 2RL", "Bristol BS2 0JA"},
		country:   "United Kingdom",
		people:    []string{"D. Evans", "Claire Hughes", "Tom Walker"}},
	{name: "de", v: de, weight: 8,
		currency: []weighted[currency]{{1, currency{"EUR", "€"}}},
		convs:    []weighted[numConv]{{80, convEU}, {12, convPlainEU}, {8, convSpace}},
		dates:    []weighted[string]{{60, "DD.MM.YYYY"}, {20, "DD.MM.YY"}, {10, "D. Month YYYY"}, {10, "YYYY-MM-DD"}},
		tax:      "vat", rates: []string{"19", "19", "7"},
		ids:       []weighted[string]{{60, "digits"}, {20, "prefix"}, {20, "hyphen"}},
		companies: []string{"Nordwind Handels GmbH", "Schraubenwerk Meier KG", "Technik Vogel GmbH & Co. KG", "Bayerische Verpackung AG", "Elektro Schäfer GmbH", "Müller Präzisionsteile GmbH"},
		streets:   []string{"Hafenstraße 12", "Industrieweg 3", "Gewerbepark Süd 7", "Am Bahnhof 21", "Dieselstraße 45"},
		cities:    []string{"20457 Hamburg", "33602 Bielefeld", "80331 München", "70565 Stuttgart", "04109 Leipzig"},
		country:   "Deutschland",
		people:    []string{"M. Schneider", "Anna Becker", "Jürgen Weiß"}},
	{name: "ch", v: de, weight: 2,
		currency: []weighted[currency]{{8, currency{"CHF", ""}}, {2, currency{"EUR", "€"}}},
		convs:    []weighted[numConv]{{80, convSwiss}, {20, convPlain}},
		dates:    []weighted[string]{{80, "DD.MM.YYYY"}, {20, "DD.MM.YY"}},
		tax:      "vat", rates: []string{"8.1", "7.7"},
		ids:       []weighted[string]{{70, "digits"}, {30, "prefix"}},
		companies: []string{"Alpine Components AG", "Zürcher Werkzeug AG", "Bergmann Logistik GmbH"},
		streets:   []string{"Bahnhofstrasse 5", "Industriestrasse 14"},
		cities:    []string{"6300 Zug", "8005 Zürich", "4051 Basel"},
		country:   "Schweiz",
		people:    []string{"R. Keller", "Daniela Frei"}},
	{name: "fr", v: fr, weight: 7,
		currency: []weighted[currency]{{1, currency{"EUR", "€"}}},
		convs:    []weighted[numConv]{{65, convSpace}, {25, convEU}, {10, convPlainEU}},
		dates:    []weighted[string]{{65, "DD/MM/YYYY"}, {20, "D Month YYYY"}, {15, "DD/MM/YY"}},
		tax:      "vat", rates: []string{"20", "20", "5.5"},
		ids:       []weighted[string]{{40, "digits"}, {30, "prefix"}, {30, "hyphen"}},
		companies: []string{"Maison Durand SA", "Quincaillerie du Rhône SARL", "Emballages Lefèvre", "Électricité Moreau & Fils", "Mécanique Générale de Bretagne"},
		streets:   []string{"12 rue des Artisans", "ZI des Chênes, 4 allée Ampère", "45 avenue Jean Jaurès"},
		cities:    []string{"69003 Lyon", "35000 Rennes", "13015 Marseille", "59000 Lille"},
		country:   "France",
		people:    []string{"C. Bernard", "Hélène Dubois", "Marc Lefèvre"}},
	{name: "nl", v: nl, weight: 6,
		currency: []weighted[currency]{{1, currency{"EUR", "€"}}},
		convs:    []weighted[numConv]{{80, convEU}, {20, convPlainEU}},
		dates:    []weighted[string]{{60, "DD-MM-YYYY"}, {20, "D Month YYYY"}, {10, "DD-MM-YY"}, {10, "DD/MM/YYYY"}},
		tax:      "vat", rates: []string{"21", "21", "9"},
		ids:       []weighted[string]{{50, "digits"}, {30, "prefix"}, {20, "hyphen"}},
		companies: []string{"Van der Berg Installatietechniek B.V.", "De Vries Verpakkingen B.V.", "Jansen Techniek", "Bakker Elektro B.V.", "Hollandse Kantoorartikelen N.V."},
		streets:   []string{"Kanaalweg 88", "Industrieweg 12", "Havenstraat 3"},
		cities:    []string{"3526 KM Utrecht", "3011 AB Rotterdam", "5611 EM Eindhoven", "1014 BA Amsterdam"},
		country:   "Nederland",
		people:    []string{"J. de Jong", "Sanne Visser", "P. van Dijk"}},
	{name: "es", v: es, weight: 6,
		currency: []weighted[currency]{{1, currency{"EUR", "€"}}},
		convs:    []weighted[numConv]{{85, convEU}, {15, convPlainEU}},
		dates:    []weighted[string]{{65, "DD/MM/YYYY"}, {15, "D Month YYYY"}, {10, "DD-MM-YYYY"}, {10, "DD/MM/YY"}},
		tax:      "vat", rates: []string{"21", "21", "10"},
		ids:       []weighted[string]{{40, "digits"}, {30, "prefix"}, {30, "hyphen"}},
		companies: []string{"Suministros Industriales García S.L.", "Embalajes del Norte S.A.", "Ferretería Martínez", "Electricidad Levante S.L."},
		streets:   []string{"Calle de Alcalá 120", "Polígono Las Mercedes, Nave 7", "Avenida Diagonal 455"},
		cities:    []string{"28009 Madrid", "08036 Barcelona", "46015 Valencia", "48001 Bilbao"},
		country:   "España",
		people:    []string{"L. Fernández", "Marta López", "José Ruiz"}},
	{name: "it", v: it, weight: 6,
		currency: []weighted[currency]{{1, currency{"EUR", "€"}}},
		convs:    []weighted[numConv]{{85, convEU}, {15, convPlainEU}},
		dates:    []weighted[string]{{70, "DD/MM/YYYY"}, {15, "D Month YYYY"}, {5, "DD.MM.YYYY"}, {10, "DD/MM/YY"}},
		tax:      "vat", rates: []string{"22", "22", "10"},
		ids:       []weighted[string]{{40, "digits"}, {30, "prefix"}, {30, "hyphen"}},
		companies: []string{"Rossi Forniture Industriali S.r.l.", "Imballaggi Bianchi S.p.A.", "Ferramenta Colombo", "Elettrica Ferrari S.r.l."},
		streets:   []string{"Via Roma 15", "Via dell'Industria 42", "Corso Buenos Aires 8"},
		cities:    []string{"20124 Milano", "10121 Torino", "40128 Bologna", "35129 Padova"},
		country:   "Italia",
		people:    []string{"G. Russo", "Chiara Esposito", "Luca Romano"}},
}
