// Package ldm is the logical data model of a project: folders, datasets, attributes with
// their keys and labels, facts and date dimensions, and the physical layout of the tables
// that hold their data. Apply runs a parsed MAQL script against a model, all or nothing, and
// returns the new model together with the warehouse steps (create, alter, drop a table) the
// script asks for.
//
// Physical names follow the reference: {f_devs.id} is column id of table f_devs. Physical
// names are case-insensitive and kept in lower case. A dataset owns one table; its
// attributes have their key there (the first attribute with a FULLSET key is the dataset's
// connection point, the table's primary key), its labels and facts are columns of it, and a
// key that an attribute of another dataset has in this table is a reference column.
//
// The date template (INCLUDE TEMPLATE "URN:GOODDATA:DATE" MODIFY (IDENTIFIER "d")) adds a
// dataset {d.dataset.dt} without a table. Its attributes are parts of a date computed from
// the DATE reference columns that {d.date} is keyed by: {d.date}, {d.week}, {d.month},
// {d.quarter}, {d.year}, {d.day_of_week}, {d.month_of_year} and {d.quarter_of_year}, each with
// one label ({d.date} has two: {d.date.yyyymmdd} and {d.date.mmddyyyy}); see DateParts.
package ldm
