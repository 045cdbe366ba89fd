WITH q0 AS (SELECT CAST(sum(t0."f_amount") AS DOUBLE) AS v0 FROM "p_p1".main."f_sales" t0)
SELECT * FROM (SELECT q0.v0 AS m0 FROM q0) r WHERE m0 IS NOT NULL
-- args: []interface {}(nil)
