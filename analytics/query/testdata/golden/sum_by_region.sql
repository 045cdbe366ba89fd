WITH q0 AS (SELECT t1."regions_id" AS k0, CAST(sum(t0."f_amount") AS DOUBLE) AS v0 FROM "p_p1".main."f_sales" t0 LEFT JOIN "p_p1".main."f_stores" t1 ON t1."id" = t0."stores_id" GROUP BY 1)
SELECT * FROM (SELECT e0.id AS a0, CAST(l0.v AS VARCHAR) AS l0, q0.v0 AS m0 FROM q0 JOIN "p_p1".herald."f_regions.id" e0 ON e0.key = q0.k0 LEFT JOIN (SELECT "id" AS k, "nm_name" AS v FROM "p_p1".main."f_regions") l0 ON l0.k = q0.k0 WHERE q0.k0 IS NOT NULL) r WHERE m0 IS NOT NULL
-- args: []interface {}(nil)
