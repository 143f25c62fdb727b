package pogen

import "slices"

// featureNames lists every name Truth.Features can hold. Tests check that
// each appears over 1,000 seeds and that nothing else is emitted.
var featureNames = []string{
	// header: where the order number sits and what competes with it
	"label_same_line", "label_above", "label_no_colon", "glued_label", "title_number", "number_under_title",
	"number_date_combined", "tally_voucher", "grid_fields", "boxed_grid", "spaced_title", "copy_mark",
	"barcode_text", "id_repeated", "id_digits", "id_prefix", "id_hyphen", "id_slash", "competing_numbers",
	"revision_field", "multi_dates", "timestamp", "delivery_words", "header_total",
	// parties and notes
	"side_by_side_blocks", "bill_to", "invoice_mention", "bank_details", "order_reference",
	// numbers, dates, currency
	"comma_decimal", "space_grouping", "apostrophe_grouping", "lakh", "ungrouped", "mixed_grouping",
	"price_decimals_3", "price_decimals_4", "price_decimals_5", "qty_decimals",
	"date_mdy", "date_dmy", "date_ymd", "month_names", "two_digit_year", "mixed_date_formats",
	"currency_code_label", "currency_code_amounts", "currency_symbol", "currency_column_header", "currency_none",
	// item table
	"header_1_line", "stacked_header_2", "stacked_header_3", "two_row_header",
	"positions_1", "positions_10", "positions_0010", "positions_00010", "positions_001", "positions_none",
	"wrapped_rows", "numbers_middle_line", "subrow_schedule", "subrow_reference", "subrow_spec",
	"qty_unit_cell", "unit_before_qty", "line_delivery_dates", "hsn_column",
	"price_basis_column", "price_basis_100", "price_basis_1000", "price_basis_inline",
	"discount", "discount_nonzero", "no_prices", "empty_price_column", "no_line_amounts",
	"multipage_table", "repeated_header", "continued_marker", "page_footer", "table_total_row",
	// totals and closing
	"tax_vat", "tax_gst", "charges", "total_quantity", "amount_in_words", "totals_next_page",
	"terms_block", "terms_page", "terms_two_column", "signature", "computer_generated",
	// whole document
	"font_proportional", "font_fixed", "font_serif", "paper_letter", "negative", "negative_amounts",
}

// FeatureNames returns every name that can appear in Truth.Features.
func FeatureNames() []string { return slices.Clone(featureNames) }
