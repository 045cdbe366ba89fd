WITH q0 AS (SELECT (year(t0."dt_sold_on_id") * 100 + month(t0."dt_sold_on_id")) AS k0, min(t0."dt_sold_on_id") AS d0, CAST(sum(t0."f_amount") AS DOUBLE) AS v0 FROM "p_p1".main."f_sales" t0 GROUP BY 1),
q1 AS (SELECT year(t0."dt_sold_on_id") AS k1, CAST(sum(t0."f_amount") AS DOUBLE) AS v0 FROM "p_p1".main."f_sales" t0 GROUP BY 1)
SELECT * FROM (SELECT q0.k0 AS a0, strftime(q0.d0, '%b %Y') AS l0, q0.v0 AS m0, q1.v0 AS m1 FROM q0 LEFT JOIN q1 ON q1.k1 = year(q0.d0) WHERE q0.k0 IS NOT NULL) r WHERE m0 IS NOT NULL OR m1 IS NOT NULL
-- args: []interface {}(nil)
