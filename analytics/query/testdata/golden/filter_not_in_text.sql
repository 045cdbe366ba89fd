WITH q0 AS (SELECT t0."stores_id" AS k0, CAST(sum(t0."f_amount") AS DOUBLE) AS v0 FROM "p_p1".main."f_sales" t0 WHERE (NOT (t0."stores_id" IN (SELECT "id" FROM "p_p1".main."f_stores" WHERE "id" IS NOT NULL AND "nm_city" IN ($1)))) AND (year(t0."dt_sold_on_id") = $2) GROUP BY 1)
SELECT * FROM (SELECT e0.id AS a0, CAST(l0.v AS VARCHAR) AS l0, q0.v0 AS m0 FROM q0 JOIN "p_p1".herald."f_stores.id" e0 ON e0.key = q0.k0 LEFT JOIN (SELECT "id" AS k, "nm_name" AS v FROM "p_p1".main."f_stores") l0 ON l0.k = q0.k0 WHERE q0.k0 IS NOT NULL) r WHERE m0 IS NOT NULL
-- args: []interface {}{"Praha", 2024}
