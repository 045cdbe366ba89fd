WITH q0 AS (SELECT t1."regions_id" AS k0, CAST(sum(t0."f_amount") AS DOUBLE) AS v0 FROM "p_p1".main."f_sales" t0 LEFT JOIN "p_p1".main."f_stores" t1 ON t1."id" = t0."stores_id" GROUP BY 1),
q1 AS (SELECT t0."regions_id" AS k0, CAST(sum(t0."f_amount") AS DOUBLE) AS v0 FROM "p_p1".main."f_targets" t0 GROUP BY 1),
k AS (SELECT k0 FROM (SELECT k0 FROM q0 UNION ALL SELECT k0 FROM q1) u GROUP BY 1)
SELECT * FROM (SELECT e0.id AS a0, CAST(l0.v AS VARCHAR) AS l0, (q0.v0 / NULLIF(q1.v0, 0)) AS m0, q1.v0 AS m1 FROM k LEFT JOIN q0 ON q0.k0 = k.k0 LEFT JOIN q1 ON q1.k0 = k.k0 JOIN "p_p1".herald."f_regions.id" e0 ON e0.key = k.k0 LEFT JOIN (SELECT "id" AS k, "nm_name" AS v FROM "p_p1".main."f_regions") l0 ON l0.k = k.k0 WHERE k.k0 IS NOT NULL) r WHERE m0 IS NOT NULL OR m1 IS NOT NULL
-- args: []interface {}(nil)
