-- Operators retry failed jobs from the dashboard as well as cancel waiting ones.
ALTER TABLE operator_actions DROP CONSTRAINT operator_actions_action_check;
ALTER TABLE operator_actions ADD CONSTRAINT operator_actions_action_check
    CHECK (action IN ('cancel', 'retry'));
