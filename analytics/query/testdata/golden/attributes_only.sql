WITH q0 AS (SELECT t0."stores_id" AS k0, t1."kind" AS k1, any_value(t1."nm_city") AS c0 FROM "p_p1".main."f_sales" t0 LEFT JOIN "p_p1".main."f_stores" t1 ON t1."id" = t0."stores_id" WHERE (t1."kind" = $1) GROUP BY 1, 2)
SELECT * FROM (SELECT e0.id AS a0, CAST(q0.c0 AS VARCHAR) AS l0, e1.id AS a1, CAST(q0.k1 AS VARCHAR) AS l1 FROM q0 JOIN "p_p1".herald."f_stores.id" e0 ON e0.key = q0.k0 JOIN "p_p1".herald."f_stores.kind" e1 ON e1.key = q0.k1 WHERE q0.k0 IS NOT NULL AND q0.k1 IS NOT NULL) r
-- args: []interface {}{"mall"}
