package main

import "database/sql"

// subscriptions reads which subscription each of the burst's deliveries is of.
func subscriptions(db *sql.DB) (map[string]string, error) {
	rows, err := db.Query(`SELECT id, subscription_id FROM deliveries WHERE subscription_id LIKE 'bench%'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, sub string
		if err := rows.Scan(&id, &sub); err != nil {
			return nil, err
		}
		out[id] = sub
	}
	return out, rows.Err()
}
