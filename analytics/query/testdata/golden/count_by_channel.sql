WITH q0 AS (SELECT t0."channel" AS k0, CAST(NULLIF(count(t0."id"), 0) AS DOUBLE) AS v0, CAST(sum(t0."f_amount") AS DOUBLE) AS v1 FROM "p_p1".main."f_sales" t0 GROUP BY 1)
SELECT * FROM (SELECT e0.id AS a0, CAST(q0.k0 AS VARCHAR) AS l0, q0.v0 AS m0, (q0.v1 / NULLIF(q0.v0, 0)) AS m1 FROM q0 JOIN "p_p1".herald."f_sales.channel" e0 ON e0.key = q0.k0 WHERE q0.k0 IS NOT NULL) r WHERE m0 IS NOT NULL OR m1 IS NOT NULL
-- args: []interface {}(nil)
