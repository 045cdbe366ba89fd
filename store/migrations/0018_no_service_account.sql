-- The engine called the API as a hidden domain admin whose password lay in
-- <data>/engine.credentials; it now runs each subscription as its owner, in
-- process, and the account goes with its sessions and their tokens, and
-- whatever a holder of the file made with it. Foreign keys are off while
-- migrations run, so nothing cascades by itself. (Such an account could
-- never be a member of a project, so it owns no subscription.)
DELETE FROM temp_tokens WHERE session_id IN
    (SELECT id FROM sessions WHERE user_id IN (SELECT id FROM users WHERE is_service = 1));
DELETE FROM sessions WHERE user_id IN (SELECT id FROM users WHERE is_service = 1);
DELETE FROM member_roles WHERE user_id IN (SELECT id FROM users WHERE is_service = 1);
DELETE FROM project_members WHERE user_id IN (SELECT id FROM users WHERE is_service = 1);
DELETE FROM recipients WHERE owner IN (SELECT id FROM users WHERE is_service = 1);
DELETE FROM channels WHERE owner IN (SELECT id FROM users WHERE is_service = 1);
DELETE FROM users WHERE is_service = 1;
