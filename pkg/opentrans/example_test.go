package opentrans_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
)

func ExampleWrite() {
	o := &order.Order{
		Type:      order.TypeOrder,
		ID:        "PO-4711",
		IssueDate: order.Date{Year: 2024, Month: time.May, Day: 13},
		Currency:  "EUR",
		Parties: []order.Party{
			{Role: order.RoleBuyer, ID: "CONTOSO", Address: order.Address{Name: "Contoso GmbH", City: "Stuttgart"}},
			{Role: order.RoleSupplier, ID: "4711"},
		},
		Items: []order.Item{{
			Position: "10", SupplierArticleID: "A-100", Description: "Schraube M8x40",
			Quantity: "200", Unit: "Stk.", UnitPrice: "12.50", PriceBasisQuantity: "100", LineAmount: "25.00",
		}},
		Totals: order.Totals{GrossAmount: "29.75"},
	}
	err := opentrans.Write(os.Stdout, o, opentrans.WriteOptions{
		GenerationTime: time.Date(2024, 5, 13, 10, 15, 0, 0, time.UTC),
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <ORDER xmlns="http://www.opentrans.org/XMLSchema/2.1" xmlns:bmecat="http://www.bmecat.org/bmecat/2005" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.opentrans.org/XMLSchema/2.1 opentrans_2_1.xsd" version="2.1" type="standard">
	//   <ORDER_HEADER>
	//     <CONTROL_INFO>
	//       <GENERATOR_INFO>docintake</GENERATOR_INFO>
	//       <GENERATION_DATE>2024-05-13T10:15:00Z</GENERATION_DATE>
	//     </CONTROL_INFO>
	//     <ORDER_INFO>
	//       <ORDER_ID>PO-4711</ORDER_ID>
	//       <ORDER_DATE>2024-05-13</ORDER_DATE>
	//       <PARTIES>
	//         <PARTY>
	//           <bmecat:PARTY_ID>CONTOSO</bmecat:PARTY_ID>
	//           <PARTY_ROLE>buyer</PARTY_ROLE>
	//           <ADDRESS>
	//             <bmecat:NAME>Contoso GmbH</bmecat:NAME>
	//             <bmecat:CITY>Stuttgart</bmecat:CITY>
	//           </ADDRESS>
	//         </PARTY>
	//         <PARTY>
	//           <bmecat:PARTY_ID>4711</bmecat:PARTY_ID>
	//           <PARTY_ROLE>supplier</PARTY_ROLE>
	//         </PARTY>
	//       </PARTIES>
	//       <ORDER_PARTIES_REFERENCE>
	//         <bmecat:BUYER_IDREF>CONTOSO</bmecat:BUYER_IDREF>
	//         <bmecat:SUPPLIER_IDREF>4711</bmecat:SUPPLIER_IDREF>
	//       </ORDER_PARTIES_REFERENCE>
	//       <bmecat:CURRENCY>EUR</bmecat:CURRENCY>
	//     </ORDER_INFO>
	//   </ORDER_HEADER>
	//   <ORDER_ITEM_LIST>
	//     <ORDER_ITEM>
	//       <LINE_ITEM_ID>10</LINE_ITEM_ID>
	//       <PRODUCT_ID>
	//         <bmecat:SUPPLIER_PID type="supplier_specific">A-100</bmecat:SUPPLIER_PID>
	//         <bmecat:DESCRIPTION_SHORT>Schraube M8x40</bmecat:DESCRIPTION_SHORT>
	//       </PRODUCT_ID>
	//       <QUANTITY>200</QUANTITY>
	//       <bmecat:ORDER_UNIT>C62</bmecat:ORDER_UNIT>
	//       <PRODUCT_PRICE_FIX>
	//         <bmecat:PRICE_AMOUNT>12.50</bmecat:PRICE_AMOUNT>
	//         <bmecat:PRICE_QUANTITY>100</bmecat:PRICE_QUANTITY>
	//       </PRODUCT_PRICE_FIX>
	//       <PRICE_LINE_AMOUNT>25.00</PRICE_LINE_AMOUNT>
	//     </ORDER_ITEM>
	//   </ORDER_ITEM_LIST>
	//   <ORDER_SUMMARY>
	//     <TOTAL_ITEM_NUM>1</TOTAL_ITEM_NUM>
	//     <TOTAL_AMOUNT>29.75</TOTAL_AMOUNT>
	//   </ORDER_SUMMARY>
	// </ORDER>
}

func ExampleRead() {
	o, err := opentrans.Read(strings.NewReader(`<ORDER xmlns="http://www.opentrans.org/XMLSchema/2.1" version="2.1" type="standard">
  <ORDER_HEADER><ORDER_INFO><ORDER_ID>PO-4711</ORDER_ID><ORDER_DATE>2024-05-13T09:30:00+02:00</ORDER_DATE>
  </ORDER_INFO></ORDER_HEADER>
  <ORDER_ITEM_LIST><ORDER_ITEM><LINE_ITEM_ID>1</LINE_ITEM_ID><PRODUCT_ID/><QUANTITY>2</QUANTITY>
    <ORDER_UNIT xmlns="http://www.bmecat.org/bmecat/2005">PK</ORDER_UNIT></ORDER_ITEM></ORDER_ITEM_LIST>
  <ORDER_SUMMARY><TOTAL_ITEM_NUM>1</TOTAL_ITEM_NUM></ORDER_SUMMARY></ORDER>`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Type, o.ID, o.IssueDate, o.Items[0].Quantity, o.Items[0].Unit)
	// Output: order PO-4711 2024-05-13 2 PK
}
